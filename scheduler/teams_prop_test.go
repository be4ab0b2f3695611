package scheduler

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/placement"
)

// Property tests of the team policy over random passes (seeded, so a
// failure names the seed that reproduces it).

// TestTeamsNeverExceedMaximum: whatever the cluster, the teams, their
// running jobs and the waiting ones, no pass takes a team past its
// maximum running cpus or memory (a team already past it, after its
// maximum was lowered, starts nothing).
func TestTeamsNeverExceedMaximum(t *testing.T) {
	for seed := int64(1); seed <= 400; seed++ {
		rng := rand.New(rand.NewSource(seed))
		var lines []string
		names := []string{"", "t1", "t2", "t3"}
		for _, n := range names[1:] {
			l := n
			if rng.Intn(4) > 0 {
				l += fmt.Sprintf(" max-cpus=%d", 2+rng.Intn(30))
			}
			if rng.Intn(3) == 0 {
				l += fmt.Sprintf(" max-memory=%dm", 2048+rng.Intn(40000))
			}
			if rng.Intn(3) == 0 {
				l += fmt.Sprintf(" weight=%d", 1+rng.Intn(4))
			}
			if rng.Intn(4) == 0 {
				l += " guaranteed-cpus=2"
			}
			lines = append(lines, l)
		}
		cfg := teamsOf(t, strings.Join(lines, "\n"))
		var agents []placement.Agent
		for i := 0; i < 1+rng.Intn(4); i++ {
			a := agent(fmt.Sprintf("a%d", i), float64(4+rng.Intn(29)), float64(8192+rng.Intn(120000)), 0.2)
			a.FreeCPUs, a.FreeMemMB = float64(rng.Intn(int(a.CPUs)+1)), a.MemMB*rng.Float64()
			agents = append(agents, a)
		}
		var running []runningJob
		for i := 0; i < rng.Intn(6); i++ {
			running = append(running, holding(fmt.Sprintf("r%d", i), names[rng.Intn(len(names))], float64(2+rng.Intn(8))))
		}
		var dj, rj []Job
		for i := 0; i < rng.Intn(25); i++ {
			j := mkJob(fmt.Sprintf("j%02d", i), 1+rng.Intn(4), 1+rng.Intn(4), inTeam(names[rng.Intn(len(names))]), submittedAt(time.Duration(rng.Intn(100))*time.Second))
			j.ExecutorMemoryMB = 512 + rng.Intn(4096)
			if rng.Intn(3) == 0 {
				withDeadline(time.Duration(10+rng.Intn(120)) * time.Minute)(&j)
				dj = append(dj, j)
			} else {
				rj = append(rj, j)
			}
		}
		d := testDecider(t, Config{Policy: []string{"bfd", "firstfit", "dap"}[rng.Intn(3)]})
		in := passInput{now: t0, snap: placement.Snapshot{Agents: agents}, deadline: entriesOf(dj...), regular: entriesOf(rj...),
			full: true, running: running, teams: cfg}
		in.deadlineAll, in.deadlineQueued = in.deadline, len(in.deadline)
		before := teamUsage(running)
		after := teamUsage(running)
		for _, dc := range d.decide(in).decisions {
			if dc.kind == decStart {
				after[dc.entry.Team] = after[dc.entry.Team].Add(footprint(dc.entry))
			}
		}
		for _, n := range names {
			tm := cfg.Team(n)
			b, a := before[n], after[n]
			for _, lim := range []struct {
				what               string
				max, before, after float64
			}{{"cpus", tm.MaxCPUs, b.CPUs, a.CPUs}, {"memory", tm.MaxMemMB, b.MemMB, a.MemMB}} {
				if lim.max <= 0 {
					continue
				}
				if lim.before <= lim.max && lim.after > lim.max+1e-6 {
					t.Fatalf("seed %d: team %q %s %g -> %g, past its maximum %g", seed, n, lim.what, lim.before, lim.after, lim.max)
				}
				if lim.before > lim.max && a != b {
					t.Fatalf("seed %d: team %q past its %s maximum started a job", seed, n, lim.what)
				}
			}
		}
	}
}

// TestTeamsFairShareNeverStarves runs passes over a cluster of equal
// slots while teams of random weights keep backlogs of equal jobs and
// random running jobs end between passes. After every pass:
//   - no slot is left free while a team has waiting work (work conserving);
//   - for a team i with waiting work and any team j,
//     running_i/w_i >= (running_j - 1)/w_j: no team holds more than one
//     job beyond its weighted share while another waits. So a team with
//     waiting work is never starved: it runs at least its weighted share
//     of the slots, less one job;
//   - a team with waiting work and nothing running gets a job started
//     within as many passes as there are teams (each pass follows the end
//     of at least one job): teams with equal shares take turns.
func TestTeamsFairShareNeverStarves(t *testing.T) {
	for seed := int64(1); seed <= 150; seed++ {
		rng := rand.New(rand.NewSource(seed))
		nTeams := 2 + rng.Intn(4)
		perAgent, nAgents := 1+rng.Intn(4), 1+rng.Intn(3)
		var lines []string
		weight := map[string]float64{}
		for i := 0; i < nTeams; i++ {
			n := fmt.Sprintf("t%d", i)
			weight[n] = float64(1 + rng.Intn(4))
			lines = append(lines, fmt.Sprintf("%s weight=%g", n, weight[n]))
		}
		cfg := teamsOf(t, strings.Join(lines, "\n"))
		var agents []placement.Agent
		for i := 0; i < nAgents; i++ {
			agents = append(agents, agent(fmt.Sprintf("a%d", i), float64(2*perAgent), 1e6, 0.2))
		}
		var waiting []Job
		for i := 0; i < 30*nTeams; i++ {
			waiting = append(waiting, mkJob(fmt.Sprintf("j%03d", i), 1, 2, inTeam(fmt.Sprintf("t%d", rng.Intn(nTeams))),
				submittedAt(time.Duration(i)*time.Second)))
		}
		type run struct {
			job  Job
			plan placement.Plan
		}
		var running []run
		mem := teamMemory{}
		idle := map[string]int{} // passes a team waited with nothing running
		now := t0
		d := testDecider(t, Config{Policy: "firstfit"})
		for round := 0; round < 40 && len(waiting) > 0; round++ {
			now = now.Add(time.Minute)
			snap := snapOf(agents)
			var rj []runningJob
			for _, r := range running {
				for _, as := range r.plan.Assignments {
					for i := range snap.Agents {
						if snap.Agents[i].ID == as.AgentID {
							snap.Agents[i].FreeCPUs -= float64(as.Executors) * 2
						}
					}
				}
				pl := r.plan
				rj = append(rj, runningJob{id: r.job.ID, plan: &pl, state: Running, team: r.job.Team, demand: DemandOf(&r.job), driverCPUs: 1, driverMemMB: 1024})
			}
			in := passInput{now: now, snap: snap, regular: entriesOf(waiting...), full: true, running: rj, teams: cfg, teamStarts: mem.lastStart}
			ds := d.decide(in).decisions
			if mem.lastStart == nil {
				mem.lastStart = map[string]time.Time{}
			}
			startedIDs := map[string]placement.Plan{}
			for _, dc := range ds {
				if dc.kind == decStart {
					startedIDs[dc.entry.ID] = dc.plan
					mem.lastStart[dc.entry.Team] = now
				}
			}
			var still []Job
			for _, j := range waiting {
				if pl, ok := startedIDs[j.ID]; ok {
					running = append(running, run{job: j, plan: pl})
				} else {
					still = append(still, j)
				}
			}
			waiting = still
			count := map[string]int{}
			for _, r := range running {
				count[r.job.Team]++
			}
			waits := map[string]bool{}
			for _, j := range waiting {
				waits[j.Team] = true
			}
			if len(waiting) > 0 && len(running) < nAgents*perAgent {
				t.Fatalf("seed %d round %d: %d of %d slots used while jobs wait", seed, round, len(running), nAgents*perAgent)
			}
			for i := range waits {
				for j := range weight {
					if float64(count[i])/weight[i] < float64(count[j]-1)/weight[j]-1e-9 {
						t.Fatalf("seed %d round %d: team %s (weight %g) runs %d and waits while team %s (weight %g) runs %d; counts %v",
							seed, round, i, weight[i], count[i], j, weight[j], count[j], count)
					}
				}
			}
			for i := range weight {
				if waits[i] && count[i] == 0 {
					idle[i]++
					if idle[i] > nTeams {
						t.Fatalf("seed %d round %d: team %s waited %d passes with nothing running; counts %v", seed, round, i, idle[i], count)
					}
				} else {
					idle[i] = 0
				}
			}
			// Some running jobs end (at least one).
			var kept []run
			ended := false
			for k, r := range running {
				if rng.Intn(3) == 0 || (!ended && k == len(running)-1) {
					ended = true
					continue
				}
				kept = append(kept, r)
			}
			running = kept
		}
	}
}
