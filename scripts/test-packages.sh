#!/usr/bin/env bash
# What the test suite needs from the system besides npm packages: the docker,
# swarm and sandbox tests start a private Docker engine and import a busybox
# image; the systemd and package tests boot systemd in a Debian rootfs that
# mmdebstrap builds, and read an rpm database with rpm (createrepo-c writes the
# rpm fixture's repository metadata, test/fixtures/packages/make-rpm-repodata.sh); the compose tests run
# Debian's docker-compose; the rollout tests push to and pull from a private
# docker-registry whose logins are an htpasswd file of bcrypt entries
# (apache2-utils' htpasswd writes it); the broker cluster tests start a private
# PostgreSQL and a private nats-server; the console and widget tests drive
# Debian's Chromium through playwright-core; the chart test renders the chart
# with Go's text/template (Debian's golang-go). Installed when missing
# (as root, with apt-get); otherwise the missing ones are named and the suite's
# harness says which tests cannot run. Run by `npm test` (pretest) and .ci/run.
set -euo pipefail

packages=()
command -v ip >/dev/null || [ -x /usr/sbin/ip ] || [ -x /sbin/ip ] || packages+=(iproute2)
command -v dockerd >/dev/null || [ -x /usr/sbin/dockerd ] || packages+=(docker.io)
[ -x /bin/busybox ] || [ -x /usr/bin/busybox ] || packages+=(busybox-static)
command -v iptables >/dev/null || [ -x /usr/sbin/iptables ] || packages+=(iptables)
[ -x /usr/bin/docker-compose ] || packages+=(docker-compose)
[ -x /usr/bin/docker-registry ] || packages+=(docker-registry)
[ -x /usr/bin/htpasswd ] || packages+=(apache2-utils)
command -v mmdebstrap >/dev/null || packages+=(mmdebstrap)
command -v rpm >/dev/null || packages+=(rpm)
command -v createrepo_c >/dev/null || packages+=(createrepo-c)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || packages+=(postgresql)
command -v nats-server >/dev/null || [ -x /usr/sbin/nats-server ] || packages+=(nats-server)
[ -x /usr/bin/chromium ] || packages+=(chromium)
command -v go >/dev/null || [ -x /usr/lib/go/bin/go ] || packages+=(golang-go)

[ ${#packages[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "installing what the tests need: ${packages[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${packages[@]}"
else
  echo "the tests need these Debian packages, which are missing: ${packages[*]} (install them as root: apt-get install -y ${packages[*]})" >&2
fi
