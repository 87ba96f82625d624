// Counting requests in a sliding window of time: recovery's share of a minute, its requests a day.

/**
 * Of requests made at `times` (ms, any order): the most within any `windowMs`, and when the first
 * window holding that many began.
 */
export function busiestWindow(times: number[], windowMs: number): { most: number; from: number } {
	const sorted = [...times].sort((a, b) => a - b);
	let most = 0;
	let from = NaN;
	for (let first = 0, last = 0; last < sorted.length; last++) {
		while (sorted[last] - sorted[first] >= windowMs) first++;
		if (last - first + 1 > most) {
			most = last - first + 1;
			from = sorted[first];
		}
	}
	return { most, from };
}
