/**
 * Response serialisers built once per schema in a process, not once per app.
 * fastify builds every route's serialiser (fast-json-stringify generates and
 * compiles code) whenever an app is built: 60 % of the 200 ms a build takes.
 * The daemon builds one app, but the test suite builds hundreds, and the CLI
 * builds one per in-process command. A serialiser depends only on its schema,
 * the shared schemas it refers to and the options, so one built for a schema
 * serves every app with the same shared schemas and options.
 */
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

type Serializer = (data: unknown) => string;
interface RouteDefinition {
  schema: unknown;
  method: string;
  url: string;
  httpStatus: string;
}
type SerializerCompiler = (route: RouteDefinition) => Serializer;
type SerializerFactory = (externalSchemas: unknown, options?: Record<string, unknown>) => SerializerCompiler;

/**
 * `factory` (fast-json-stringify's, by default) with each schema's serialiser reused across the apps it serves.
 * Keyed by the shared schemas and options, then by the schema's JSON, not the object: fastify hands every app
 * its own copies (serialising one costs a hundredth of compiling it).
 */
export function cachedSerializers(factory: SerializerFactory = SerializerSelector() as unknown as SerializerFactory): SerializerFactory {
  const built = new Map<string, Map<string, Serializer>>();
  return (externalSchemas, options) => {
    const key = `${JSON.stringify(externalSchemas)}\n${JSON.stringify(options ?? {})}`;
    const cache = built.get(key) ?? new Map<string, Serializer>();
    built.set(key, cache);
    const compile = factory(externalSchemas, options);
    return (route) => {
      const schema = JSON.stringify(route.schema);
      let serializer = cache.get(schema);
      if (!serializer) {
        serializer = compile(route);
        cache.set(schema, serializer);
      }
      return serializer;
    };
  };
}
