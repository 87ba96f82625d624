import { startSandbox } from '../sandbox';
import { Api } from '../test/sandbox/helpers';
(async () => {
  const sb = await startSandbox({ rateLimitPerMinute: 100000, reportReadyAfterPolls: 0 });
  const api = await Api.login(sb);
  const demo = await sb.control.demo();
  const out: string[] = [];
  for (const id of [7, 12, 17, 21, 23, 27, 31, 37, 42, 44, 57, 64, 77]) {
    const u = demo.users.find((x) => x.id === id)!;
    const r = await api.report('activitycompletions', { userId: id });
    out.push(`${id} ${u.username} ${u.suspended ? 'S' : ''} ${r.length} ${[...new Set(r.map((x: any) => x.contentname))].join('|').slice(0, 80)}`);
  }
  console.log(out.join('\n'));
  await sb.close();
})();
