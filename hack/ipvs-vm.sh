#!/usr/bin/env bash
# ipvs-vm.sh runs the ipvs proxy mode's real-kernel tests (package
# netagent/proxy/ipvs: TestIPVSKernel, TestRunProxyIPVS, TestIPVSSchedulers and
# TestDeviceAndRulesInNetNS) in a
# VM whose kernel has ip_vs, since this machine's kernel does not
# (docs/platform.md, "A real kernel with ip_vs, under qemu"):
#
#   1. fetch Debian's linux-image-cloud-amd64 kernel package (apt-get
#      download, cached) and unpack it; depmod its modules;
#   2. build the tests as a static binary (CGO_ENABLED=0 go test -c);
#   3. build an initramfs: busybox-static, the modules in dependency order
#      (modprobe --show-depends), iptables-legacy with its libraries, the
#      test binary and an /init that loads the modules, runs the tests and
#      prints a result marker;
#   4. boot it with qemu (software emulation: KVM hangs here), read the
#      marker from the serial log, and exit non-zero unless the tests ran
#      and passed.
#
# Needs: qemu-system-x86, busybox-static, cpio, kmod, iptables, apt-get
# (hack/install-deps.sh installs them). Environment: GO (go), IPVS_VM_CACHE
# (kernel cache, default ~/.cache/skiff/ipvs-vm), IPVS_VM_RUN (-test.run
# pattern), IPVS_VM_TIMEOUT (seconds, default 600), IPVS_VM_KEEP=1 keeps
# the work directory, IPVS_VM_SCALE=1000,10000 runs TestIPVSScale (sync
# times at that many Services, logged as IPVS-SCALE lines).
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
CACHE=${IPVS_VM_CACHE:-${HOME:-/root}/.cache/skiff/ipvs-vm}
RUN=${IPVS_VM_RUN:-'^(TestIPVSKernel|TestDeviceAndRulesInNetNS|TestRunProxyIPVS|TestIPVSSchedulers|TestIPVSScale)$'}
SCALE=${IPVS_VM_SCALE:-}
TIMEOUT=${IPVS_VM_TIMEOUT:-600}
MODS="ip_vs ip_vs_rr ip_vs_lc ip_vs_sh veth bridge br_netfilter iptable_nat iptable_filter xt_tcpudp xt_MASQUERADE xt_mark xt_addrtype xt_comment xt_conntrack ipt_REJECT nf_conntrack_netlink"

for tool in qemu-system-x86_64 cpio depmod modprobe dpkg-deb apt-get; do
  command -v "$tool" >/dev/null || { echo "ipvs-vm: $tool missing (run hack/install-deps.sh)" >&2; exit 1; }
done
BUSYBOX=/bin/busybox
[ -x "$BUSYBOX" ] && file -L "$BUSYBOX" 2>/dev/null | grep -q 'statically linked' || {
  # busybox-static installs a static /bin/busybox; check without `file`
  # when it is absent.
  ldd "$BUSYBOX" 2>&1 | grep -q 'not a dynamic executable' || { echo "ipvs-vm: $BUSYBOX is not static (install busybox-static)" >&2; exit 1; }
}
XT=$(command -v xtables-legacy-multi || true)
[ -n "$XT" ] || { echo "ipvs-vm: xtables-legacy-multi missing (install iptables)" >&2; exit 1; }

# 1. The kernel.
mkdir -p "$CACHE"
if ! ls "$CACHE"/root/boot/vmlinuz-* >/dev/null 2>&1; then
  pkg=$(apt-cache depends linux-image-cloud-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
  if [ -z "$pkg" ]; then
    apt-get update -qq
    pkg=$(apt-cache depends linux-image-cloud-amd64 | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
  fi
  [ -n "$pkg" ] || { echo "ipvs-vm: no linux-image-cloud-amd64 package in apt's lists" >&2; exit 1; }
  rm -rf "$CACHE/root" "$CACHE"/*.deb
  (cd "$CACHE" && apt-get download -q "$pkg" 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
  ls "$CACHE"/linux-image-*.deb >/dev/null 2>&1 || { echo "ipvs-vm: apt-get download $pkg failed" >&2; exit 1; }
  mkdir -p "$CACHE/root"
  dpkg-deb -x "$CACHE"/linux-image-*.deb "$CACHE/root"
  rm -f "$CACHE"/linux-image-*.deb
fi
VMLINUZ=$(ls "$CACHE"/root/boot/vmlinuz-* | head -1)
K=${VMLINUZ##*/vmlinuz-}
depmod -b "$CACHE/root" "$K"

WORK=$(mktemp -d /tmp/skiff-ipvs-vm.XXXXXX)
[ "${IPVS_VM_KEEP:-}" = 1 ] || trap 'rm -rf "$WORK"' EXIT
R=$WORK/initrd
M=lib/modules/$K
mkdir -p "$R"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,run,tmp,etc,var} "$R/$M"

# 2. The test binary.
CGO_ENABLED=0 "$GO" test -c -o "$R/ipvs.test" ./netagent/proxy/ipvs/

# 3. The initramfs.
cp "$BUSYBOX" "$R/bin/busybox"
: > "$R/$M/order"
# shellcheck disable=SC2086
modprobe -d "$CACHE/root" -S "$K" --show-depends -a $MODS | awk '$1 == "insmod" {print $2}' | while read -r ko; do
  base=$(basename "$ko")
  grep -qx "$base" "$R/$M/order" && continue
  cp "$ko" "$R/$M/$base"
  echo "$base" >> "$R/$M/order"
done
# iptables-legacy, its extensions and their libraries.
cp "$XT" "$R/usr/sbin/xtables-legacy-multi"
for name in iptables-legacy iptables-legacy-save iptables-legacy-restore iptables iptables-save iptables-restore; do
  ln -s xtables-legacy-multi "$R/usr/sbin/$name"
done
# The extensions live where libxtables was built to look (merged /usr:
# the real path, not /lib's symlink).
XTDIR=$(readlink -f "$(dirname "$(ldd "$XT" | awk '/libxtables/ {print $3}')")/xtables")
mkdir -p "$R$XTDIR"
cp "$XTDIR"/*.so "$R$XTDIR/"
{ ldd "$XT"; for so in "$XTDIR"/*.so; do ldd "$so"; done; } 2>/dev/null |
  awk '{for (i = 1; i <= NF; i++) if ($i ~ /^\//) print $i}' | sort -u | while read -r lib; do
  mkdir -p "$R$(dirname "$lib")"
  cp -L "$lib" "$R$lib"
done
cat > "$R/init" <<INIT
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
# crc32c-intel fails under qemu's default CPU: harmless (docs/platform.md, "A real kernel with ip_vs, under qemu").
while read -r m; do insmod /$M/\$m 2>/dev/null || echo "insmod \$m failed"; done < /$M/order
# moby/ipvs runs modprobe ip_vs: give it a modules.dep.
depmod
ip link set lo up
cd /tmp
export SKIFF_IPVS_SCALE='$SCALE'
echo SKIFF-IPVS-VM-START
/ipvs.test -test.v -test.count=1 -test.timeout=500s -test.run '$RUN' 2>&1
echo "SKIFF-IPVS-VM-RESULT rc=\$?"
poweroff -f
INIT
chmod +x "$R/init"
(cd "$R" && find . | cpio -o -H newc --quiet | gzip -1) > "$WORK/initrd.gz"

# 4. Boot.
start=$(date +%s)
set +e
timeout "$TIMEOUT" qemu-system-x86_64 -m 1024 -smp 1 -nographic -no-reboot \
  -kernel "$VMLINUZ" -initrd "$WORK/initrd.gz" \
  -append "console=ttyS0 panic=-1 quiet" -nic none > "$WORK/serial.log" 2>&1
qrc=$?
set -e
tr -d '\r' < "$WORK/serial.log" | sed -n '/SKIFF-IPVS-VM-START/,$p' | grep -v '^SKIFF-IPVS-VM-START'
echo "ipvs-vm: kernel $K, $(du -h "$WORK/initrd.gz" | cut -f1) initramfs, $(($(date +%s) - start)) s in qemu (exit $qrc)"
if ! grep -q 'SKIFF-IPVS-VM-START' "$WORK/serial.log"; then
  echo "ipvs-vm: the tests never started; serial log:" >&2
  tail -50 "$WORK/serial.log" >&2
  exit 1
fi
if ! tr -d '\r' < "$WORK/serial.log" | grep -q '^SKIFF-IPVS-VM-RESULT rc=0$'; then
  echo "ipvs-vm: FAIL" >&2
  exit 1
fi
if tr -d '\r' < "$WORK/serial.log" | grep -q -- '--- SKIP: TestIPVSKernel'; then
  echo "ipvs-vm: FAIL: TestIPVSKernel skipped inside the VM" >&2
  exit 1
fi
echo "ipvs-vm: PASS"
