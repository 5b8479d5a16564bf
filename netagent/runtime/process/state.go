package process

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/skiff-dev/skiff/netagent/runtime"
)

// record is one container's state file, <StateDir>/<id>.json.
type record struct {
	ID         string   `json:"id"`
	PodUID     string   `json:"podUID"`
	Namespace  string   `json:"namespace"`
	PodName    string   `json:"podName"`
	Name       string   `json:"name"`
	Argv       []string `json:"argv"`
	Env        []string `json:"env,omitempty"`
	WorkingDir string   `json:"workingDir,omitempty"`
	NetNSPath  string   `json:"netnsPath,omitempty"`
	LogPath    string   `json:"logPath"`
	// StdinPath is the FIFO that is the container's stdin (spec stdin:
	// true; see attach.go); StdinOnce and StdinClosed: its stdin ends
	// with the first attach session's, and has ended.
	StdinPath   string `json:"stdinPath,omitempty"`
	StdinOnce   bool   `json:"stdinOnce,omitempty"`
	StdinClosed bool   `json:"stdinClosed,omitempty"`
	Pid         int    `json:"pid"`
	// StartTicks is field 22 of /proc/<pid>/stat when the process started:
	// a pid whose start time differs is another process.
	StartTicks uint64        `json:"startTicks"`
	StartedAt  time.Time     `json:"startedAt"`
	State      runtime.State `json:"state"`
	ExitCode   int           `json:"exitCode"`
	// ExitCodeUnknown: the process exited while no runtime was its parent,
	// so its status was never read; ExitCode then holds ExitCodeUnknown.
	ExitCodeUnknown bool      `json:"exitCodeUnknown,omitempty"`
	FinishedAt      time.Time `json:"finishedAt,omitzero"`
	// Creds is the user, capabilities and no_new_privs the container's
	// process got from its securityContext; every exec gets them too.
	// Nil (a state file from before): the agent's own.
	Creds *creds `json:"creds,omitempty"`
	// Cgroup is the container's cgroup (under the pod's; cgroups.go), ""
	// without one; Reason is "OOMKilled" when the OOM killer ended a
	// process in it before the container exited.
	Cgroup string `json:"cgroup,omitempty"`
	Reason string `json:"reason,omitempty"`
}

func (r *record) status() runtime.ContainerStatus {
	return runtime.ContainerStatus{
		ID:         r.ID,
		PodUID:     r.PodUID,
		Name:       r.Name,
		State:      r.State,
		ExitCode:   r.ExitCode,
		StartedAt:  r.StartedAt,
		FinishedAt: r.FinishedAt,
		Pid:        r.Pid,
		LogPath:    r.LogPath,
		Reason:     r.Reason,
	}
}

func newID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

func validID(id string) bool {
	if len(id) != 32 {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil
}

func (r *Runtime) statePath(id string) string { return filepath.Join(r.cfg.StateDir, id+".json") }

// save writes rec atomically: a temporary file in the same directory,
// renamed over the old one. There is no fsync: a record only matters while
// the process it describes can be alive, and the one event that loses
// written but unsynced data, a crash of the machine, also ends every
// process (after it, New finds each recorded pid dead or reused, or the
// file missing or unreadable, and the container is gone either way). An
// agent crash loses nothing: the data is in the page cache. Saves run
// under r.mu, and two fsyncs per save there cost ~7 ms each on this VM,
// serialising every container start and exit of the node.
func (r *Runtime) save(rec *record) error {
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(r.cfg.StateDir, rec.ID+".json.tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, r.statePath(rec.ID)); err != nil {
		return err
	}
	ok = true
	return nil
}

// load reads every state file; leftovers of interrupted saves are removed
// and unreadable files are reported and skipped.
func (r *Runtime) load() (map[string]*record, error) {
	entries, err := os.ReadDir(r.cfg.StateDir)
	if err != nil {
		return nil, err
	}
	recs := make(map[string]*record)
	for _, e := range entries {
		name := e.Name()
		if strings.Contains(name, ".json.tmp") {
			os.Remove(filepath.Join(r.cfg.StateDir, name))
			continue
		}
		id, ok := strings.CutSuffix(name, ".json")
		if !ok || !validID(id) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(r.cfg.StateDir, name))
		if err != nil {
			return nil, err
		}
		rec := new(record)
		if err := json.Unmarshal(b, rec); err != nil || rec.ID != id {
			r.log.Warn("runtime/process: skipping unreadable state file", "file", name, "err", err)
			continue
		}
		recs[id] = rec
	}
	return recs, nil
}

func (r *Runtime) removeState(id string) error {
	if err := os.Remove(r.statePath(id)); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("runtime/process: remove state of %s: %w", id, err)
	}
	return nil
}
