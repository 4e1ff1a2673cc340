import type { AlertPart, DoctorPart, InventoryPart, TrustCheck } from './domain-parts.ts';
import { PART_FOLDERS } from './parts.gen.ts';

/** Every verification a domain's collector setup may skip, in the order of the parts files. */
export const TRUST_CHECKS: readonly TrustCheck[] = PART_FOLDERS.flatMap((parts): readonly TrustCheck[] => ('trust' in parts ? parts.trust : []));

/** Every domain's part of a host's inventory, in the order of the parts files. */
export const INVENTORY_PARTS: readonly InventoryPart[] = PART_FOLDERS.flatMap((parts) => ('inventory' in parts ? [parts.inventory] : []));

/** Every domain's checks in the doctor, in the order of the parts files. */
export const DOCTOR_PARTS: readonly DoctorPart[] = PART_FOLDERS.flatMap((parts) => ('doctor' in parts ? [parts.doctor] : []));

/** Every domain's rows in a host's alerts, in the order of the parts files. */
export const ALERT_PARTS: readonly AlertPart[] = PART_FOLDERS.flatMap((parts) => ('alerts' in parts ? [parts.alerts] : []));
