package netagent

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	goruntime "runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/skiff-dev/skiff/api"
)

// defaultNodeName is the host name, lower-cased.
func defaultNodeName() (string, error) {
	h, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("netagent: node name: %w", err)
	}
	return strings.ToLower(h), nil
}

// hostInfo is what the Node reports about the machine.
type hostInfo struct {
	cpus     int
	memKi    int64
	nodeInfo api.NodeSystemInfo
}

func readHostInfo(runtimeName, version string) hostInfo {
	h := hostInfo{cpus: goruntime.NumCPU()}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) >= 2 && f[0] == "MemTotal:" {
				h.memKi, _ = strconv.ParseInt(f[1], 10, 64)
			}
		}
	}
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	var uts unix.Utsname
	kernel := ""
	if unix.Uname(&uts) == nil {
		kernel = unix.ByteSliceToString(uts.Release[:])
	}
	osImage := "Linux"
	if b, err := os.ReadFile("/etc/os-release"); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "PRETTY_NAME="); ok {
				osImage = strings.Trim(v, `"'`)
			}
		}
	}
	h.nodeInfo = api.NodeSystemInfo{
		MachineID:               read("/etc/machine-id"),
		SystemUUID:              read("/sys/class/dmi/id/product_uuid"),
		BootID:                  read("/proc/sys/kernel/random/boot_id"),
		KernelVersion:           kernel,
		OSImage:                 osImage,
		ContainerRuntimeVersion: runtimeName + "://skiff-" + version,
		KubeletVersion:          "skiff-" + version,
		KubeProxyVersion:        "skiff-" + version,
		OperatingSystem:         goruntime.GOOS,
		Architecture:            goruntime.GOARCH,
	}
	return h
}
