export { startAzurite, AZURITE_ACCOUNT, type Azurite, type AzuriteOptions } from './azurite.js';
