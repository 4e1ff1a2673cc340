/** The labels compose (v1 and v2) puts on what it makes: how fleetmesh finds a host's projects without their compose files. */
export const PROJECT_LABEL = 'com.docker.compose.project';
export const SERVICE_LABEL = 'com.docker.compose.service';
/** A container's number within its service (`shop_web_2` is 2). */
export const NUMBER_LABEL = 'com.docker.compose.container-number';
/** `docker compose run` containers: one-offs, not the project's services. */
export const ONEOFF_LABEL = 'com.docker.compose.oneoff';
