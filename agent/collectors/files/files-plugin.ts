import { filesHead } from '../../../shared/domains/files/files-head.ts';
import type { FilesOptions } from '../../../shared/domains/files/files-options.ts';
import type { CollectorPlugin } from '../collector-plugin.ts';
import { FilesCollector } from './files-collector.ts';

/** The files a host's operator allows the fleet to read (--file-paths). */
export const filesPlugin: CollectorPlugin<FilesCollector> = {
  domain: filesHead,
  create: ({ domainOptions }) => new FilesCollector(domainOptions as FilesOptions),
};
