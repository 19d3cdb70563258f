/** `@switchyard/secure-fields-react`: React components over `@switchyard/secure-fields`. */
export { CardNumber, ExpiryDate, SecureFieldsProvider, SecurityCode, useSecureFields } from './secure-fields-react';
export type {
  CardNumberProps,
  SecureFieldProps,
  SecureFieldsInstance,
  SecureFieldsProviderProps,
  UseSecureFields,
} from './secure-fields-react';
export type { CardDetails, ChangeEvent, FieldName } from '@switchyard/secure-fields';
