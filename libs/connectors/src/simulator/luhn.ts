/**
 * The Luhn check (ISO/IEC 7812-1) the simulator's made-up numbers pass: network tokens, replacement card numbers. The
 * simulator stands for outside providers, so it shares no code with the service (which has its own in contracts).
 */
export function passesLuhn(digits: string): boolean {
  let total = 0;
  for (let i = 0; i < digits.length; i++) {
    let digit = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
    total += digit;
  }
  return total % 10 === 0;
}

/** `digits` completed with the check digit that makes it pass Luhn. */
export function withCheckDigit(digits: string): string {
  for (let check = 0; check < 10; check++) if (passesLuhn(`${digits}${check}`)) return `${digits}${check}`;
  throw new Error('unreachable: one check digit always fits');
}
