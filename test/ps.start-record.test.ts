// ps start answers only once its row is complete (issue 29): the host answers "ok" as it takes
// a command, a moment before it records the pids; under load a start that read the row at
// once answered with `pid not yet known` and left supervisor_pid null. Checked under a CPU hog,
// and with the pause made long (KT_RECORD_DELAY_MS, the host's seam) so that it cannot be missed.
import { afterEach, expect, test } from "bun:test";
import { endSandboxes, ktAsync, rows, sandbox } from "./_process.ts";

afterEach(endSandboxes);

test("ps start answers only once its row is complete (supervisor_pid set), under load", async () => {
  const { cwd, stateDir } = sandbox();
  const hogs = [0, 1].map(() => Bun.spawn(["nice", "-n", "19", "bash", "-c", "while :; do :; done"]));
  try {
    for (let i = 1; i <= 8; i++) {
      const r = await ktAsync(["ps", "start", `echo up ${i}; exec sleep 60`], { cwd, stateDir, env: i <= 2 ? { KT_RECORD_DELAY_MS: "400" } : {} });
      // The row as it is the moment ps start has answered.
      const row = rows(stateDir).find((x) => x.id === `p${i}`) as { supervisor_pid: number | null; pid: number | null } | undefined;
      expect(r.stdout).toStartWith(`Started p${i} (pid ${row?.pid}): echo up ${i}; exec sleep 60\n`);
      expect(row?.supervisor_pid).not.toBeNull();
      expect(row?.pid).not.toBeNull();
    }
  } finally {
    for (const h of hogs) h.kill("SIGKILL");
  }
}, 120_000);
