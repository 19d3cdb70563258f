import {
  caretAfter,
  cardNumberState,
  expiryState,
  formatCardNumber,
  formatExpiry,
  formatSecurityCode,
  passesLuhn,
  securityCodeState,
} from './card-input';

describe('the card number', () => {
  it.each([
    ['4111111111111111', '4111 1111 1111 1111'],
    ['4111 1111-1111.1111', '4111 1111 1111 1111'],
    ['41111', '4111 1'],
    ['4111111111111111111', '4111 1111 1111 1111 111'],
    ['41111111111111111119', '4111 1111 1111 1111 111'],
    ['378282246310005', '3782 822463 10005'],
    ['3782822463100059', '3782 822463 10005'],
    ['36227206271667', '3622 720627 1667'],
    ['5555555555554444', '5555 5555 5555 4444'],
    ['55555555555544449', '5555 5555 5555 4444'],
    ['', ''],
    ['abc', ''],
  ])('%j is shown as %j', (typed, shown) => {
    expect(formatCardNumber(typed)).toBe(shown);
  });

  it('is complete at a length its scheme has, and valid when it also passes the Luhn check', () => {
    expect(cardNumberState('')).toEqual({ empty: true, complete: false, valid: false });
    expect(cardNumberState('411111111111111')).toEqual({ empty: false, complete: false, valid: false });
    expect(cardNumberState('4111111111111111')).toEqual({ empty: false, complete: true, valid: true });
    expect(cardNumberState('4111111111111112')).toEqual({ empty: false, complete: true, valid: false });
    expect(cardNumberState('378282246310005')).toEqual({ empty: false, complete: true, valid: true });
    // 15 digits are not a mastercard's length, even passing the Luhn check.
    expect(cardNumberState('555555555555442')).toEqual({ empty: false, complete: false, valid: false });
    // A scheme not told by the pattern: 12 to 19 digits.
    expect(cardNumberState('8171998927611203')).toEqual({ empty: false, complete: true, valid: true });
  });

  it('passes the Luhn check only for digits that add up', () => {
    expect(passesLuhn('4111111111111111')).toBe(true);
    expect(passesLuhn('4455667711111110')).toBe(true);
    expect(passesLuhn('4111111111111112')).toBe(false);
    expect(passesLuhn('')).toBe(false);
    expect(passesLuhn('4111 1111 1111 1111')).toBe(false);
  });

  it('keeps the caret after the same digit when spaces are added', () => {
    expect(caretAfter('4111 1', 5)).toBe(6);
    expect(caretAfter('4111 1111', 4)).toBe(4);
    expect(caretAfter('4111 1111', 0)).toBe(0);
    expect(caretAfter('4111', 9)).toBe(4);
  });
});

describe('the expiry date', () => {
  const now = new Date(2026, 4, 15); // May 2026

  it.each([
    ['1', '1'],
    ['4', '04'],
    ['12', '12'],
    ['123', '12/3'],
    ['1228', '12/28'],
    ['12/28', '12/28'],
    ['12/289', '12/28'],
    ['428', '04/28'],
    ['0', '0'],
    ['', ''],
  ])('%j is shown as %j', (typed, shown) => {
    expect(formatExpiry(typed)).toBe(shown);
  });

  it('is complete with four digits, valid when the month exists and is not past, and given to the API as MM/YY', () => {
    expect(expiryState('', now)).toEqual({ empty: true, complete: false, valid: false, value: '' });
    expect(expiryState('12/2', now)).toEqual({ empty: false, complete: false, valid: false, value: '' });
    expect(expiryState('12/28', now)).toEqual({ empty: false, complete: true, valid: true, value: '12/28' });
    expect(expiryState('05/26', now)).toMatchObject({ valid: true }); // good through the end of its month
    expect(expiryState('04/26', now)).toMatchObject({ complete: true, valid: false });
    expect(expiryState('13/28', now)).toMatchObject({ complete: true, valid: false });
    expect(expiryState('00/28', now)).toMatchObject({ complete: true, valid: false });
    expect(expiryState('05/46', now)).toMatchObject({ valid: true });
    expect(expiryState('06/46', now)).toMatchObject({ complete: true, valid: false }); // more than 20 years ahead
  });
});

describe('the security code', () => {
  it('takes up to 4 digits', () => {
    expect(formatSecurityCode('12a34 5')).toBe('1234');
  });

  it('is 3 digits, 4 for amex, 3 or 4 while the scheme is unknown', () => {
    expect(securityCodeState('', 'visa')).toEqual({ empty: true, complete: false, valid: false });
    expect(securityCodeState('12', 'visa')).toEqual({ empty: false, complete: false, valid: false });
    expect(securityCodeState('123', 'visa')).toEqual({ empty: false, complete: true, valid: true });
    expect(securityCodeState('1234', 'visa')).toEqual({ empty: false, complete: true, valid: false });
    expect(securityCodeState('123', 'amex')).toEqual({ empty: false, complete: false, valid: false });
    expect(securityCodeState('1234', 'amex')).toEqual({ empty: false, complete: true, valid: true });
    expect(securityCodeState('123', null)).toEqual({ empty: false, complete: true, valid: true });
    expect(securityCodeState('1234', null)).toEqual({ empty: false, complete: true, valid: true });
  });
});
