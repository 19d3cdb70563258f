export * from './start-gateway';
export * from './create-gateway-app';
export * from './tokens';
export { MERCHANT_ACCOUNT_HEADER } from './auth/auth.guard';
export { dashboardSettingsFrom, type DashboardSettings } from './dashboard';
