/**
 * The ordering structure behind the completions change feed (spec §6).
 *
 * Every visible version of a record sits at one feed position (`seq`), assigned when the
 * version BECOMES VISIBLE (after the configurable visibility delay), never when it is written.
 * Positions only grow, so a cursor (a position) never skips anything: a change that becomes
 * visible later is appended after every position handed out before (rule 6). A changed record
 * leaves its old position and moves to the tail (rule 7: it can be delivered twice). A deleted
 * record just disappears (rule 8).
 */
import type { CompletionData } from './types';

export interface FeedEntry {
	seq: number;
	rec: CompletionData;
	alive: boolean;
}

interface Slot {
	entry: FeedEntry | null;
	pending: { rec: CompletionData; visibleAt: number; order: number } | null;
}

export class FeedLog {
	/** sorted by seq; dead entries are compacted away from time to time */
	entries: FeedEntry[] = [];
	seq = 0;
	private slots = new Map<number, Slot>();
	private pendingIds = new Set<number>();
	private order = 0;
	private dead = 0;

	/** the latest version of a record (visible or still pending) */
	get(id: number): CompletionData | undefined {
		const s = this.slots.get(id);
		return s?.pending?.rec ?? s?.entry?.rec;
	}

	/** latest versions of every existing record */
	*current(): IterableIterator<CompletionData> {
		for (const id of this.slots.keys()) {
			const r = this.get(id);
			if (r) yield r;
		}
	}

	get size() {
		return this.slots.size;
	}

	/** Writes a new version of a record; it becomes visible `delayMs` after `now`. */
	put(rec: CompletionData, now: number, delayMs: number): void {
		let s = this.slots.get(rec.completionid);
		if (!s) {
			s = { entry: null, pending: null };
			this.slots.set(rec.completionid, s);
		}
		if (delayMs <= 0) {
			s.pending = null;
			this.pendingIds.delete(rec.completionid);
			this.append(s, rec);
		} else {
			s.pending = { rec, visibleAt: now + delayMs, order: this.order++ };
			this.pendingIds.add(rec.completionid);
		}
	}

	/** Removes a record from the feed silently (user or content deletion). */
	remove(id: number): void {
		const s = this.slots.get(id);
		if (!s) return;
		if (s.entry) this.kill(s.entry);
		this.pendingIds.delete(id);
		this.slots.delete(id);
	}

	/** Makes every pending version whose time has come visible, in the order the changes happened. */
	promote(now: number): void {
		if (this.pendingIds.size === 0) return;
		const due: { id: number; visibleAt: number; order: number }[] = [];
		for (const id of this.pendingIds) {
			const p = this.slots.get(id)!.pending!;
			if (p.visibleAt <= now) due.push({ id, visibleAt: p.visibleAt, order: p.order });
		}
		due.sort((a, b) => a.visibleAt - b.visibleAt || a.order - b.order);
		for (const d of due) {
			const s = this.slots.get(d.id)!;
			const rec = s.pending!.rec;
			s.pending = null;
			this.pendingIds.delete(d.id);
			this.append(s, rec);
		}
	}

	/** index of the first entry with seq > position */
	indexAfter(position: number): number {
		let lo = 0;
		let hi = this.entries.length;
		while (lo < hi) {
			const mid = (lo + hi) >>> 1;
			if (this.entries[mid].seq <= position) lo = mid + 1;
			else hi = mid;
		}
		return lo;
	}

	private append(s: Slot, rec: CompletionData) {
		if (s.entry) this.kill(s.entry);
		const entry: FeedEntry = { seq: ++this.seq, rec, alive: true };
		this.entries.push(entry);
		s.entry = entry;
	}

	private kill(e: FeedEntry) {
		e.alive = false;
		this.dead++;
		if (this.dead > 1000 && this.dead > this.entries.length / 2) {
			this.entries = this.entries.filter((x) => x.alive);
			this.dead = 0;
		}
	}

	toJSON() {
		const pending = [...this.pendingIds].map((id) => this.slots.get(id)!.pending!);
		return {
			seq: this.seq,
			entries: this.entries.filter((e) => e.alive).map((e) => [e.seq, e.rec] as const),
			pending,
		};
	}

	static fromJSON(j: ReturnType<FeedLog['toJSON']>): FeedLog {
		const f = new FeedLog();
		f.seq = j.seq;
		for (const [seq, rec] of j.entries) {
			const entry: FeedEntry = { seq, rec, alive: true };
			f.entries.push(entry);
			f.slots.set(rec.completionid, { entry, pending: null });
		}
		for (const p of j.pending) {
			let s = f.slots.get(p.rec.completionid);
			if (!s) f.slots.set(p.rec.completionid, (s = { entry: null, pending: null }));
			s.pending = { ...p, order: f.order++ };
			f.pendingIds.add(p.rec.completionid);
		}
		return f;
	}
}
