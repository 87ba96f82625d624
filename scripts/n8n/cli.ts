// Small entry for the harness pieces on their own:
//   npx tsx scripts/n8n/cli.ts install   # Node 24 + n8n 2.40.7 into the cache (CI can pre-warm it)
//   npx tsx scripts/n8n/cli.ts pack      # build + npm pack, prints the tarball path
//   npx tsx scripts/n8n/cli.ts paths     # where the cache lives
import { ensureN8nInstalled } from './install';
import { log, timingReport } from './log';
import { packPackage } from './pack';
import { n8nPaths } from './paths';
import { cleanupAll, installSignalHandlers } from './processes';

async function main(): Promise<void> {
	installSignalHandlers();
	const command = process.argv[2] ?? 'install';
	if (command === 'install') {
		const paths = await ensureN8nInstalled();
		log(`n8n: ${paths.n8nBin}\nnode: ${paths.node24Bin}`);
	} else if (command === 'pack') {
		const packed = await packPackage();
		process.stdout.write(`${packed.tarball}\n`);
	} else if (command === 'paths') {
		process.stdout.write(`${JSON.stringify(n8nPaths(), null, 2)}\n`);
	} else {
		throw new Error(`unknown command ${command} (install | pack | paths)`);
	}
	log(`timings:\n${timingReport()}`);
}

main().then(
	() => cleanupAll(),
	async (error) => {
		process.stderr.write(`${(error as Error).stack ?? error}\n`);
		await cleanupAll();
		process.exit(1);
	},
);
