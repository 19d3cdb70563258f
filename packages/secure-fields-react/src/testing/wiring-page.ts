/**
 * The page of the wrapper's browser test (bundled with React by the test): `<SecureFieldsProvider>` around a
 * `<CardNumber>` and a pay button, over a `FakeSecureFields` the test drives through `window.wiring`.
 */
import { createElement, type ReactElement } from 'react';
import { flushSync } from 'react-dom';
import { createRoot } from 'react-dom/client';
import { CardNumber, SecureFieldsProvider, useSecureFields } from '../secure-fields-react';
import { FakeSecureFields } from './fake-secure-fields';

const fake = new FakeSecureFields();
const received: Array<{ readonly handler: string; readonly event: string; readonly detail: unknown }> = [];
const container = document.getElementById('root');
if (!container) throw new Error('no #root');
const root = createRoot(container);

function PayButton(): ReactElement {
  const { submit } = useSecureFields();
  return createElement('button', { id: 'pay', type: 'button', onClick: () => void submit() }, 'Pay');
}

/** Renders the checkout with handlers named `handler` (a new function each time), or nothing. */
function render(handler: string | null): void {
  flushSync(() =>
    root.render(
      handler === null
        ? null
        : createElement(
            SecureFieldsProvider,
            { serviceUrl: 'https://pay.example', sessionId: '6f1c1f64-8c1e-4a55-9a0c-3f3e0c7b2a10', instance: fake },
            createElement(CardNumber, {
              onCardDetailsChanged: (detail) => received.push({ handler, event: 'card-details-changed', detail }),
              onChange: (detail) => received.push({ handler, event: 'change', detail }),
            }),
            createElement(PayButton),
          ),
    ),
  );
}

const api = { fake, received, render };
// A global function, so that the test's functions (serialized into the page) call `wiring()` as they do in Node.
Object.assign(window, { wiring: () => api });
