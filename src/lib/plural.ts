/** "1 task", "2 tasks": a count with its noun in the right number (`plural` for irregular ones). */
export function count(n: number, noun: string, plural = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : plural}`;
}
