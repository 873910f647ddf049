package bench

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
)

// userHZ is the unit of the CPU times in /proc/<pid>/stat (USER_HZ, 100 on Linux).
const userHZ = 100

// CPU is the CPU time, in seconds, that each process used during one phase.
type CPU struct {
	APIServer, Etcd, Cleaner float64
	// Harness is the benchmark's own process: the floor's client, when it runs.
	Harness float64 `json:",omitempty"`
}

func (c CPU) sub(o CPU) CPU {
	return CPU{APIServer: c.APIServer - o.APIServer, Etcd: c.Etcd - o.Etcd, Cleaner: c.Cleaner - o.Cleaner, Harness: c.Harness - o.Harness}
}

func (c CPU) add(o CPU) CPU {
	return CPU{APIServer: c.APIServer + o.APIServer, Etcd: c.Etcd + o.Etcd, Cleaner: c.Cleaner + o.Cleaner, Harness: c.Harness + o.Harness}
}

func (c CPU) scale(k float64) CPU {
	return CPU{APIServer: c.APIServer * k, Etcd: c.Etcd * k, Cleaner: c.Cleaner * k, Harness: c.Harness * k}
}

// cpuMeter reads the CPU time of kube-apiserver, etcd and one csv-cleaner
// from /proc: it costs the processes nothing, unlike a scrape.
type cpuMeter struct {
	apiServer, etcd, cleaner int
}

func (e *Env) cpuMeter(cleaner *Cleaner) (cpuMeter, error) {
	m := cpuMeter{cleaner: cleaner.Pid()}
	var err error
	if m.apiServer, err = e.CP.APIServerPid(); err != nil {
		return m, err
	}
	if m.etcd, err = e.CP.EtcdPid(); err != nil {
		return m, err
	}
	return m, nil
}

// controlPlaneMeter reads kube-apiserver and etcd alone, for a phase no
// csv-cleaner runs in (its slot reads kube-apiserver again, unused).
func (e *Env) controlPlaneMeter() (cpuMeter, error) {
	var m cpuMeter
	var err error
	if m.apiServer, err = e.CP.APIServerPid(); err != nil {
		return m, err
	}
	if m.etcd, err = e.CP.EtcdPid(); err != nil {
		return m, err
	}
	m.cleaner = m.apiServer
	return m, nil
}

func (m cpuMeter) read() (c CPU, err error) {
	if c.APIServer, err = cpuSeconds(m.apiServer); err != nil {
		return c, err
	}
	if c.Etcd, err = cpuSeconds(m.etcd); err != nil {
		return c, err
	}
	if c.Cleaner, err = cpuSeconds(m.cleaner); err != nil {
		return c, err
	}
	c.Harness, err = cpuSeconds(os.Getpid())
	return c, err
}

// during is the CPU time each process used while fn ran.
func (m cpuMeter) during(fn func() error) (CPU, error) {
	before, err := m.read()
	if err != nil {
		return CPU{}, err
	}
	if err := fn(); err != nil {
		return CPU{}, err
	}
	after, err := m.read()
	return after.sub(before), err
}

// cpuSeconds is the user and system CPU time process pid has used.
func cpuSeconds(pid int) (float64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("reading the CPU time of process %d: %w", pid, err)
	}
	ticks, err := cpuTicks(raw)
	if err != nil {
		return 0, fmt.Errorf("parsing /proc/%d/stat: %w", pid, err)
	}
	return float64(ticks) / userHZ, nil
}

// cpuTicks is utime plus stime from the text of /proc/<pid>/stat.
func cpuTicks(stat []byte) (uint64, error) {
	// "pid (comm) state ...": the command name may hold spaces and
	// parentheses; the fields after it start with the state (field 3), and
	// utime and stime are fields 14 and 15.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("no command name")
	}
	f := bytes.Fields(stat[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("%d fields after the command name, want at least 13", len(f))
	}
	var ticks uint64
	for _, v := range f[11:13] {
		n, err := strconv.ParseUint(string(v), 10, 64)
		if err != nil {
			return 0, err
		}
		ticks += n
	}
	return ticks, nil
}
