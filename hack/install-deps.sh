#!/usr/bin/env bash
# Installs the Debian packages Skiff's tests need. Idempotent; needs root
# for apt-get (skipped with a message when not root and all tools exist).
set -euo pipefail
# qemu-system-x86, busybox-static, cpio, kmod: hack/ipvs-vm.sh (make
# ipvs-vm) boots Debian's linux-image-cloud-amd64, which it fetches itself
# with apt-get download, to test the ipvs proxy mode on a kernel with ip_vs.
# containerd + runc: the containerd runtime's tests start their own daemon.
pkgs=(ca-certificates git make containernetworking-plugins iproute2 iptables nftables conntrack
  qemu-system-x86 busybox-static cpio kmod containerd runc curl bind9-dnsutils)
missing=()
# docker-registry (the CNCF distribution registry) + apache2-utils (htpasswd):
# the pull-secret tests run a registry with htpasswd auth on 127.0.0.1.
pkgs+=(docker-registry apache2-utils)
# chromium: the dashboard's browser tests (web/); the font: their Chinese screenshots.
pkgs+=(chromium fonts-wqy-microhei)
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ "${#missing[@]}" -eq 0 ]; then
  echo "deps: all present (${pkgs[*]})"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "deps: missing ${missing[*]} and not root; install them first" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
