// The real-n8n harness: install, pack, start, drive and stop n8n 2.40.7 with this package.
export * from './ai';
export * from './client';
export * from './demo';
export * from './fetch';
export * from './install';
export * from './log';
export * from './n8n';
export * from './pack';
export * from './paths';
export * from './ports';
export * from './processes';
export * from './sandbox-api';
export * from './stack';
export * from './tls-front';
export * from './queue';
export * from './services';
export * from './slowness';
