import { loadConfig } from '../../../server/config.js';
import { createDaemon } from '../../../server/daemon.js';
const d = await createDaemon(loadConfig({ TOPOD_BACKEND: 'sim', TOPOD_DB: ':memory:', TOPOD_LOG_LEVEL: 'silent' }));
await d.start(); await d.whenIdle();
const url = await d.app.listen({ host: '127.0.0.1', port: 4567 });
const res = await fetch(url + '/v1/gpus/0/topology'); console.log('ETAG', res.headers.get('etag'));
process.on('SIGINT', () => { void d.close().then(() => process.exit(0)); });
