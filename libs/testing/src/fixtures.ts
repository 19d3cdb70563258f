/** A valid body of `POST /merchant-accounts/{id}/three-ds-configurations` (Visa, USD). */
export const threeDsConfigurationBody = {
  merchant_acquirer_bin: '516327',
  merchant_acquirer_id: '123456789012345',
  merchant_name: 'Shop',
  merchant_country_code: '840',
  merchant_category_code: '5411',
  merchant_url: 'https://shop.example',
  scheme: 'visa',
  currency: 'USD',
} as const;
