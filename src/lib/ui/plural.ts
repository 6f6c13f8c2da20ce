/** "1 task", "2 tasks": a count with its noun in the right number (regular plurals only). */
export function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
