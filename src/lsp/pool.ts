// The warm servers of one process (the session's host, or kt mcp / kt call --jsonl itself):
// one client per (server, project root), started on first need, stopped after IDLE_MS
// unused or with the process, started again once after a crash. A fault is told once: the
// slot remembers whether its prose was given.
import { LspClient, type Fault } from "./client.ts";
import type { Located } from "./locate.ts";
import { faultProse } from "./render.ts";
import { grouped } from "../core/text.ts";

/** A server unused this long is stopped (KT_LSP_IDLE_MS, for tests). */
const IDLE_MS = 10 * 60_000;
/** A server that has not answered initialize by then is hung (KT_LSP_START_MS, for tests). */
const START_MS = 30_000;

function envMs(name: string, fallback: number): number {
  const given = Number(process.env[name]);
  return Number.isFinite(given) && given > 0 ? given : fallback;
}

interface Slot {
  key: string;
  located: Located;
  client: LspClient;
  restarts: number;
  /** The current client's fault has been told. */
  told: boolean;
  /** Crashed after its restart (or could not start at all): not started again. */
  dead: boolean;
}

export type Acquired =
  | { kind: "client"; client: LspClient; slot: Slot; notice?: string }
  | { kind: "dead"; slot: Slot; notice?: string };

export class Pool {
  private readonly slots = new Map<string, Slot>();
  private sweeper: ReturnType<typeof setInterval> | undefined;
  get idleMs(): number {
    return envMs("KT_LSP_IDLE_MS", IDLE_MS);
  }

  get startMs(): number {
    return envMs("KT_LSP_START_MS", START_MS);
  }

  /** The client for a located server, started if need be; a fault not yet told comes as `notice`. */
  acquire(located: Located): Acquired {
    const key = keyOf(located);
    let slot = this.slots.get(key);
    if (!slot) {
      slot = { key, located, client: this.launch(located), restarts: 0, told: false, dead: false };
      this.slots.set(key, slot);
      return { kind: "client", client: slot.client, slot };
    }
    slot.client.lastUsed = performance.now();
    if (!slot.client.fault) return { kind: "client", client: slot.client, slot };
    if (slot.dead) return { kind: "dead", slot, ...this.tell(slot) };
    // A crash after a good start is given one more start; a server that never started is not.
    if (slot.client.isReady && slot.restarts < 1) {
      const notice = this.tell(slot, "will");
      slot.restarts++;
      slot.client = this.launch(located);
      slot.told = false;
      return { kind: "client", client: slot.client, slot, ...notice };
    }
    slot.dead = true;
    return { kind: "dead", slot, ...this.tell(slot) };
  }

  /** The slot of a server acquired before. */
  slotOf(located: Located): Slot | undefined {
    return this.slots.get(keyOf(located));
  }

  /** The fault prose of the slot's client, the first time it is asked for. */
  tell(slot: Slot | undefined, restarts?: "will" | "wont"): { notice?: string } {
    const fault = slot?.client.fault;
    if (!slot || !fault || slot.told) return {};
    slot.told = true;
    const will = restarts ?? (slot.client.isReady && slot.restarts < 1 && !slot.dead ? "will" : "wont");
    if (will === "wont") slot.dead = true;
    return { notice: faultProse(slot.located.entry.id, commandLine(slot.located), fault, will) };
  }

  private launch(located: Located): LspClient {
    const client = new LspClient({
      id: located.entry.id,
      command: located.executable,
      args: located.entry.args,
      root: located.root,
      ...(located.initializationOptions ? { initializationOptions: located.initializationOptions } : {}),
      ...(located.entry.settings ? { settings: located.entry.settings } : {}),
    });
    void client.start();
    const startMs = this.startMs;
    const hung = setTimeout(() => {
      if (!client.isReady && !client.fault) client.markHung(`it did not answer initialize within ${grouped(startMs)} ms`);
    }, startMs);
    hung.unref?.();
    this.sweep();
    return client;
  }

  private sweep(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(() => {
      const now = performance.now();
      for (const [key, slot] of this.slots) {
        if (now - slot.client.lastUsed < this.idleMs) continue;
        void slot.client.stop();
        this.slots.delete(key);
      }
      if (this.slots.size === 0) {
        clearInterval(this.sweeper);
        this.sweeper = undefined;
      }
    }, Math.min(30_000, Math.max(50, this.idleMs / 4)));
    this.sweeper.unref?.();
  }

  /** Servers running (not failed). */
  running(): LspClient[] {
    return [...this.slots.values()].map((s) => s.client).filter((c) => !c.fault && !c.exited);
  }

  /** Nothing is running and nothing was used within the idle time: a host may go. */
  idle(): boolean {
    return this.running().length === 0;
  }

  async stopAll(): Promise<void> {
    const clients = [...this.slots.values()].map((s) => s.client);
    this.slots.clear();
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
    await Promise.all(clients.map((c) => c.stop()));
  }

  /** Last resort at exit: no server outlives the process that holds it. */
  killAll(): void {
    for (const slot of this.slots.values()) slot.client.killNow();
  }
}

function keyOf(located: Located): string {
  return `${located.entry.id}\u0000${located.root}`;
}

export function commandLine(located: Located): string {
  return [located.executable, ...located.entry.args].join(" ");
}

export type { Fault };
