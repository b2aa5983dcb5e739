package world

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ingress-sync/ingress-sync/pkg/nginx"
)

// NginxProcesses are the processes of one syncer's nginx: the master and
// its children (the workers, and for a while after a reload the old
// workers finishing their requests). A reload changes Children; a dynamic
// update does not.
type NginxProcesses struct {
	Master   int
	Children []int // sorted
}

// Nginx reads the master's pid from the pid file in the syncer's nginx
// directory and its children from /proc.
func (s *Syncer) Nginx() (NginxProcesses, error) {
	b, err := os.ReadFile(filepath.Join(s.Dir, "nginx.pid"))
	if err != nil {
		return NginxProcesses{}, fmt.Errorf("world: %s: nginx pid: %w", s.Name, err)
	}
	master, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return NginxProcesses{}, fmt.Errorf("world: %s: nginx pid file: %w", s.Name, err)
	}
	children, err := childrenOf(master)
	if err != nil {
		return NginxProcesses{}, fmt.Errorf("world: %s: nginx workers: %w", s.Name, err)
	}
	return NginxProcesses{Master: master, Children: children}, nil
}

// childrenOf lists the children of every thread of pid, sorted.
func childrenOf(pid int) ([]int, error) {
	files, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	if err != nil || len(files) == 0 {
		return nil, errors.Join(fmt.Errorf("no process %d", pid), err)
	}
	var out []int
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, field := range strings.Fields(string(b)) {
			n, err := strconv.Atoi(field)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

// NginxConf returns the nginx.conf installed in the syncer's nginx
// directory and its checksum (its "# checksum" line): what the workers
// report once they run it.
func (s *Syncer) NginxConf() (text, checksum string, err error) {
	b, err := os.ReadFile(filepath.Join(s.Dir, "nginx.conf"))
	if err != nil {
		return "", "", fmt.Errorf("world: %s: %w", s.Name, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if sum, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "# checksum "); ok {
			return string(b), sum, nil
		}
	}
	return "", "", fmt.Errorf("world: %s: no checksum line in nginx.conf", s.Name)
}

// NginxVersion asks the syncer's nginx for GET /configuration/version: the
// nginx.conf checksum a worker runs and the state it was pushed.
func (s *Syncer) NginxVersion(ctx context.Context) (nginx.Version, error) {
	return s.status.GetVersion(ctx)
}
