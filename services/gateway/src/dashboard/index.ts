export { DashboardModule } from './dashboard.module';
export { DashboardSessions } from './dashboard-sessions';
export { dashboardSettingsFrom, DEFAULT_DASHBOARD_SETTINGS, type DashboardSettings } from './dashboard-settings';
export { CSRF_HEADER } from './dashboard-auth.guard';
export { SESSION_COOKIE } from './session-cookie';
