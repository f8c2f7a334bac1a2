/**
 * The Dockerfile read as Docker reads it (dockerfile-ast), reduced to what a
 * test of the image's contents needs: per stage its base, working folder,
 * COPY steps, environment, volumes, CMD and HEALTHCHECK.
 */
import { Cmd, DockerfileParser, Env, Healthcheck, ModifiableInstruction, type Instruction } from 'dockerfile-ast';
import path from 'node:path';

export interface CopyStep {
  /** The stage (or image) named by --from; null: the build context. */
  from: string | null;
  sources: string[];
  /** Absolute, resolved against the stage's WORKDIR. */
  destination: string;
  /** The destination is a folder the sources go into (it ends in "/", or there are several sources). */
  intoFolder: boolean;
}

export interface Stage {
  name: string | null;
  image: string;
  workdir: string;
  copies: CopyStep[];
  env: Record<string, string>;
  volumes: string[];
  /** CMD in exec form. */
  cmd: string[];
  /** The HEALTHCHECK's command in shell form, null without one. */
  healthcheck: string | null;
}

const flagValue = (instruction: Instruction, name: string): string | null =>
  instruction instanceof ModifiableInstruction
    ? (instruction
        .getFlags()
        .find((flag) => flag.getName() === name)
        ?.getValue() ?? null)
    : null;

const values = (instruction: Instruction): string[] => instruction.getArguments().map((argument) => argument.getValue());

export function readStages(dockerfileText: string): Stage[] {
  const stages: Stage[] = [];
  for (const instruction of DockerfileParser.parse(dockerfileText).getInstructions()) {
    const keyword = instruction.getKeyword();
    if (keyword === 'FROM') {
      const [image = '', as, name] = values(instruction);
      stages.push({
        name: as?.toUpperCase() === 'AS' ? (name ?? null) : null,
        image,
        workdir: '/',
        copies: [],
        env: {},
        volumes: [],
        cmd: [],
        healthcheck: null,
      });
      continue;
    }
    const stage = stages.at(-1);
    if (!stage) continue;
    const args = values(instruction);
    switch (keyword) {
      case 'WORKDIR':
        stage.workdir = path.posix.resolve(stage.workdir, args[0] ?? '.');
        break;
      case 'COPY':
      case 'ADD': {
        const destination = args.at(-1) ?? '.';
        const sources = args.slice(0, -1);
        stage.copies.push({
          from: flagValue(instruction, 'from'),
          sources,
          destination: path.posix.resolve(stage.workdir, destination),
          intoFolder: destination.endsWith('/') || sources.length > 1,
        });
        break;
      }
      case 'ENV':
        if (instruction instanceof Env)
          for (const property of instruction.getProperties()) stage.env[property.getName()] = property.getValue() ?? '';
        break;
      case 'VOLUME':
        stage.volumes.push(...args.map((a) => a.replace(/^\[|\]$|^"|"$|,$/g, '')));
        break;
      case 'CMD': {
        const json = instruction instanceof Cmd ? instruction.getJSONStrings() : [];
        stage.cmd = json.length > 0 ? json.map((s) => s.getJSONValue()) : ['/bin/sh', '-c', args.join(' ')];
        break;
      }
      case 'HEALTHCHECK': {
        const subcommand = instruction instanceof Healthcheck ? instruction.getSubcommand()?.getValue() : undefined;
        stage.healthcheck = subcommand?.toUpperCase() === 'CMD' ? args.slice(args.indexOf(subcommand) + 1).join(' ') : null;
        break;
      }
      default:
        break;
    }
  }
  return stages;
}

/** Where a path inside the image lands when the image's `/` is `root`. */
export const inRoot = (root: string, imagePath: string): string => path.join(root, ...imagePath.split('/').filter(Boolean));
