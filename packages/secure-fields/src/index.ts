/** `@switchyard/secure-fields`: the merchant's module (served as `/secure-fields/secure-fields.js`). */
export { SecureFields } from './secure-fields';
export type {
  ChangeEvent,
  FieldOptions,
  SecureFieldsEventName,
  SecureFieldsEvents,
  SecureFieldsOptions,
  SubmitOptions,
} from './secure-fields';
export type { CardDetails, FieldName } from './messages';
