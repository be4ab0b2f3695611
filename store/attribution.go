package store

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"time"

	"github.com/google/uuid"
	"github.com/lib/pq"

	"github.com/sparkpack/sparkpack/scheduler"
)

// IdleJobID is the ledger's job id for the idle remainder (the nil uuid).
const IdleJobID = "00000000-0000-0000-0000-000000000000"

// SaveCost stores, in one transaction, the cost meter's total and what the
// meter (writer: one leadership term's meter) attributed per bucket and
// job since it started (scheduler.CostMeter.Checkpoint): saved together,
// the ledger adds up to the total. Neither ever goes down (a save sent
// twice, or a deposed leader's late one, changes nothing); it is a
// leader-only write (fenced). An entry whose job id is not a uuid goes to
// the idle remainder.
func (s *Store) SaveCost(ctx context.Context, writer string, totalUSD float64, entries []scheduler.LedgerEntry) error {
	if math.IsNaN(totalUSD) || math.IsInf(totalUSD, 0) || totalUSD < 0 {
		return fmt.Errorf("save the cost meter: %v is not an amount", totalUSD)
	}
	if _, err := uuid.Parse(writer); err != nil {
		return fmt.Errorf("save the cost ledger: writer %q is not a uuid", writer)
	}
	type key struct {
		b   time.Time
		job string
	}
	merged := map[key]*scheduler.Usage{}
	var order []key
	for _, e := range entries {
		job := e.JobID
		if job == "" {
			job = IdleJobID
		} else if _, err := uuid.Parse(job); err != nil {
			job = IdleJobID
		}
		k := key{e.Bucket.UTC(), job}
		u := merged[k]
		if u == nil {
			u = &scheduler.Usage{}
			merged[k] = u
			order = append(order, k)
		}
		u.CostUSD += clean(e.CostUSD)
		u.CPUSeconds += clean(e.CPUSeconds)
		u.MemMBSeconds += clean(e.MemMBSeconds)
	}
	buckets := make([]time.Time, len(order))
	jobs := make([]string, len(order))
	cost := make([]float64, len(order))
	cpu := make([]float64, len(order))
	mem := make([]float64, len(order))
	for i, k := range order {
		u := merged[k]
		buckets[i], jobs[i], cost[i], cpu[i], mem[i] = k.b, k.job, u.CostUSD, u.CPUSeconds, u.MemMBSeconds
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO cost_meter (id, total_usd, updated_at) VALUES (1, $1, $2)
			ON CONFLICT (id) DO UPDATE SET total_usd = greatest(cost_meter.total_usd, EXCLUDED.total_usd),
			updated_at = CASE WHEN EXCLUDED.total_usd >= cost_meter.total_usd THEN EXCLUDED.updated_at ELSE cost_meter.updated_at END`,
			totalUSD, s.timestamp()); err != nil {
			return fmt.Errorf("save the cost meter: %w", err)
		}
		if len(order) == 0 {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO cost_ledger (writer, bucket, job_id, cost_usd, cpu_seconds, mem_mb_seconds)
			SELECT $1, u.bucket, u.job_id, u.cost, u.cpu, u.mem
			FROM unnest($2::timestamptz[], $3::uuid[], $4::float8[], $5::float8[], $6::float8[]) AS u(bucket, job_id, cost, cpu, mem)
			ON CONFLICT (writer, bucket, job_id) DO UPDATE SET
				cost_usd = greatest(cost_ledger.cost_usd, EXCLUDED.cost_usd),
				cpu_seconds = greatest(cost_ledger.cpu_seconds, EXCLUDED.cpu_seconds),
				mem_mb_seconds = greatest(cost_ledger.mem_mb_seconds, EXCLUDED.mem_mb_seconds)`,
			writer, pq.Array(buckets), pq.Array(jobs), pq.Array(cost), pq.Array(cpu), pq.Array(mem)); err != nil {
			return fmt.Errorf("save the cost ledger (%d entries): %w", len(order), err)
		}
		return nil
	})
}

func clean(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return 0
	}
	return f
}

// JobCost is what the ledger attributes to one job: in all, and by one
// writer (the caller's own meter, whose newer figures it may hold).
type JobCost struct {
	All    scheduler.Usage
	Writer scheduler.Usage
}

// JobCosts reads the ledger's totals of the given jobs (absent: nothing
// attributed). writer may be "" (then JobCost.Writer stays zero).
func (s *Store) JobCosts(ctx context.Context, ids []string, writer string) (map[string]JobCost, error) {
	out := map[string]JobCost{}
	valid := uuidsOnly(ids)
	if len(valid) == 0 {
		return out, nil
	}
	if _, err := uuid.Parse(writer); err != nil {
		writer = IdleJobID
	}
	rows, err := s.db.QueryContext(ctx, `SELECT job_id::text, sum(cost_usd), sum(cpu_seconds), sum(mem_mb_seconds),
			coalesce(sum(cost_usd) FILTER (WHERE writer = $2), 0), coalesce(sum(cpu_seconds) FILTER (WHERE writer = $2), 0),
			coalesce(sum(mem_mb_seconds) FILTER (WHERE writer = $2), 0)
		FROM cost_ledger WHERE job_id = ANY($1::uuid[]) GROUP BY job_id`, pq.Array(valid), writer)
	if err != nil {
		return nil, fmt.Errorf("read job costs: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var c JobCost
		if err := rows.Scan(&id, &c.All.CostUSD, &c.All.CPUSeconds, &c.All.MemMBSeconds,
			&c.Writer.CostUSD, &c.Writer.CPUSeconds, &c.Writer.MemMBSeconds); err != nil {
			return nil, fmt.Errorf("read job costs: %w", err)
		}
		out[id] = c
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read job costs: %w", err)
	}
	return out, nil
}

// LedgerTotals is the ledger's sums: the idle remainder and what was
// attributed to jobs, in all and excluding one writer.
type LedgerTotals struct {
	IdleUSD, JobsUSD                  float64
	IdleOtherWritersUSD, JobsOtherUSD float64
}

// CostLedgerTotals sums the ledger (writer: the caller's own meter, left
// out of the Other figures; "" for none).
func (s *Store) CostLedgerTotals(ctx context.Context, writer string) (LedgerTotals, error) {
	if _, err := uuid.Parse(writer); err != nil {
		writer = "ffffffff-ffff-ffff-ffff-ffffffffffff"
	}
	var t LedgerTotals
	err := s.db.QueryRowContext(ctx, `SELECT
			coalesce(sum(cost_usd) FILTER (WHERE job_id = $1), 0),
			coalesce(sum(cost_usd) FILTER (WHERE job_id <> $1), 0),
			coalesce(sum(cost_usd) FILTER (WHERE job_id = $1 AND writer <> $2), 0),
			coalesce(sum(cost_usd) FILTER (WHERE job_id <> $1 AND writer <> $2), 0)
		FROM cost_ledger`, IdleJobID, writer).Scan(&t.IdleUSD, &t.JobsUSD, &t.IdleOtherWritersUSD, &t.JobsOtherUSD)
	if err != nil {
		return t, fmt.Errorf("sum the cost ledger: %w", err)
	}
	return t, nil
}

// uuidsOnly keeps the ids that are UUIDs, so that a query can compare
// them as uuid[] (the jobs' index serves it; job_id::text = ANY(...) read
// every row) without failing on one that is not (no job has it).
func uuidsOnly(ids []string) []string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if _, err := uuid.Parse(id); err == nil {
			out = append(out, id)
		}
	}
	return out
}
