package main

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/teams"
)

// teamsHolder is teams.Holder (mesosConfig carries one to the core).
type teamsHolder = teams.Holder

// teamsReload is how often the teams file is checked for changes.
const teamsReload = 5 * time.Second

// teamsFile is serve's teams configuration: the file, the configuration in
// force and its watcher (nil without --teams), and the leadership, once
// known, for the cluster's size and the teams' usage.
type teamsFile struct {
	w  *teams.Watcher
	ha atomic.Pointer[leadership]
}

// loadTeams reads --teams at start: a bad file refuses to start (the error
// names the line). The guarantees are checked against the cluster whenever
// its size is known (on the leader, once it has seen the agents): at every
// reload and PUT /api/v1/teams, and by the scheduler, which logs an error
// when the cluster is smaller than the guarantees in force.
func loadTeams(c serveConfig, log *logrus.Logger) (*teamsFile, error) {
	t := &teamsFile{}
	if c.teamsFile == "" {
		return t, nil
	}
	t.w = &teams.Watcher{Path: c.teamsFile, Holder: &teams.Holder{}, Log: log.WithField("component", "teams"),
		Check: func(cfg *teams.Config) error {
			if lv := t.live(); lv != nil {
				if cpus, mem, ok := lv.core.Capacity(); ok {
					return cfg.CheckCapacity(cpus, mem)
				}
			}
			return nil
		}}
	if err := t.w.Load(); err != nil {
		return nil, err
	}
	var names []string
	for _, tm := range t.w.Holder.Get().Teams {
		names = append(names, tm.Name)
	}
	log.WithFields(logrus.Fields{"file": c.teamsFile, "teams": names}).Info("teams configuration loaded")
	return t, nil
}

// leading tells it the leadership (nil without --mesos-master).
func (t *teamsFile) leading(h *leadership) { t.ha.Store(h) }

// live is the scheduler of this instance's current term as leader, or nil.
func (t *teamsFile) live() *live {
	if h := t.ha.Load(); h != nil {
		return h.cur.Load()
	}
	return nil
}

func (t *teamsFile) holder() *teams.Holder {
	if t.w == nil {
		return nil
	}
	return t.w.Holder
}

// wire hands the API the teams configuration, PUT /api/v1/teams and the
// scheduler's per-team usage.
func (t *teamsFile) wire(acfg *api.Config) {
	if t.w == nil {
		return
	}
	acfg.Teams, acfg.SaveTeams = t.w.Holder, t.w.Save
	acfg.TeamUsage = func() map[string]teams.Usage {
		if lv := t.live(); lv != nil {
			return lv.core.TeamUsage()
		}
		return nil
	}
}

// run reloads the file on SIGHUP and when it changes until the returned
// stop is called.
func (t *teamsFile) run() (stop func()) {
	if t.w == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); t.w.Run(ctx, teamsReload, hup) }()
	return func() { signal.Stop(hup); cancel(); wg.Wait() }
}
