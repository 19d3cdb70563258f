/**
 * The React wrapper rendered on the server (`react-dom/server`): each field component renders the element its iframe
 * will go into, and nothing touches the DOM or the library while rendering — the frames are made in effects, in the
 * browser (the wiring of the events: secure-fields-react.e2e.spec.ts, in Chromium).
 */
import { createElement, type ReactElement } from 'react';
import { renderToString } from 'react-dom/server';
import { CardNumber, ExpiryDate, SecureFieldsProvider, SecurityCode, useSecureFields } from './secure-fields-react';
import { FakeSecureFields } from './testing/fake-secure-fields';

const serviceUrl = 'https://pay.example';
const sessionId = '6f1c1f64-8c1e-4a55-9a0c-3f3e0c7b2a10';

function SubmitButton(): ReactElement {
  const { ready } = useSecureFields();
  return createElement('button', { type: 'button', disabled: !ready }, 'Pay');
}

describe('server rendering', () => {
  it('renders one container per field, the submit hook not ready, and no iframe (those are made in the browser)', () => {
    const html = renderToString(
      createElement(
        SecureFieldsProvider,
        { serviceUrl, sessionId },
        createElement(CardNumber, { className: 'card-number', onCardDetailsChanged: () => undefined }),
        createElement(ExpiryDate, { style: { width: '50%' } }),
        createElement(SecurityCode, { placeholder: 'CVV' }),
        createElement(SubmitButton),
      ),
    );
    expect(html).toBe(
      '<div class="card-number" data-secure-field-container="number"></div>' +
        '<div style="width:50%" data-secure-field-container="expiry"></div>' +
        '<div data-secure-field-container="security_code"></div>' +
        '<button type="button" disabled="">Pay</button>',
    );
  });

  it('neither adds fields nor subscribes to a given instance while rendering', () => {
    const fake = new FakeSecureFields();
    renderToString(
      createElement(
        SecureFieldsProvider,
        { serviceUrl, sessionId, instance: fake },
        createElement(CardNumber, { onCardDetailsChanged: () => undefined }),
      ),
    );
    expect(fake.added).toEqual([]);
    expect(fake.listeners('card-details-changed')).toBe(0);
    expect(fake.destroyed).toBe(false);
  });

  it('refuses a field or the hook outside <SecureFieldsProvider>', () => {
    expect(() => renderToString(createElement(CardNumber))).toThrow(
      '<CardNumber> must be used inside <SecureFieldsProvider>',
    );
    expect(() => renderToString(createElement(ExpiryDate))).toThrow(
      '<ExpiryDate> must be used inside <SecureFieldsProvider>',
    );
    expect(() => renderToString(createElement(SecurityCode))).toThrow(
      '<SecurityCode> must be used inside <SecureFieldsProvider>',
    );
    expect(() => renderToString(createElement(SubmitButton))).toThrow(
      'useSecureFields() must be used inside <SecureFieldsProvider>',
    );
  });
});
