package perfmodel

import (
	"fmt"
	"math"
)

// KneeSaving: without a deadline, right-sizing stops at the first count
// where one more executor saves less than this share of the run time.
const KneeSaving = 0.10

// SizeRequest asks for an executor count (dSpark eq. 3.1-3.8).
type SizeRequest struct {
	// Min and Max bound the count (1 <= Min <= Max <= MaxExecutors).
	Min, Max int
	// PricePerExecutorSecond is the price of an executor-second (>= 0; 0
	// compares executor-seconds).
	PricePerExecutorSecond float64
	// TimeToDeadline in seconds; 0 when the job has no deadline.
	TimeToDeadline float64
}

// Choice is a right-sized count and why.
type Choice struct {
	Executors int
	P50, P90  float64
	// CostP50 is Executors x price x P50.
	CostP50 float64
	// MeetsDeadline: the p90 run time fits the time to the deadline (false
	// without a deadline).
	MeetsDeadline bool
	Reason        string
}

// Predictor predicts the run time with e executors.
type Predictor func(e int) (Prediction, error)

// RightSize chooses an executor count. With a deadline: the cheapest count
// (E x price x p50, fewer executors on a tie) whose p90 meets the time to
// the deadline; if none does, the count with the lowest p90. Without one:
// the knee, the smallest count from which one more executor saves less
// than KneeSaving of the p50 run time (Max if there is none).
func RightSize(pred Predictor, req SizeRequest) (Choice, error) {
	if req.Min < 1 || req.Max < req.Min || req.Max > MaxExecutors {
		return Choice{}, &InputError{Field: "executors", Msg: fmt.Sprintf("bounds [%d, %d] not within [1, %d]", req.Min, req.Max, MaxExecutors)}
	}
	if !finite(req.PricePerExecutorSecond) || req.PricePerExecutorSecond < 0 {
		return Choice{}, &InputError{Field: "price", Msg: fmt.Sprintf("%v is not a price >= 0", req.PricePerExecutorSecond)}
	}
	if err := checkSeconds("timeToDeadline", req.TimeToDeadline, true); err != nil {
		return Choice{}, err
	}
	price := req.PricePerExecutorSecond
	if price == 0 {
		price = 1
	}
	at := func(e int) (Choice, error) {
		p, err := pred(e)
		if err != nil {
			return Choice{}, fmt.Errorf("predict %d executors: %w", e, err)
		}
		if !(p.P50 > 0) || !finite(p.P50) || !(p.P90 > 0) || !finite(p.P90) {
			return Choice{}, fmt.Errorf("predict %d executors: run time %v/%v: %w", e, p.P50, p.P90, ErrNoModel)
		}
		return Choice{Executors: e, P50: p.P50, P90: p.P90, CostP50: float64(e) * price * p.P50,
			MeetsDeadline: req.TimeToDeadline > 0 && p.P90 <= req.TimeToDeadline}, nil
	}
	if req.TimeToDeadline > 0 {
		var best, fastest Choice
		found := false
		for e := req.Min; e <= req.Max; e++ {
			c, err := at(e)
			if err != nil {
				return Choice{}, err
			}
			if e == req.Min || c.P90 < fastest.P90 {
				fastest = c
			}
			if c.MeetsDeadline && (!found || c.CostP50 < best.CostP50*(1-1e-12)) {
				best, found = c, true
			}
		}
		if found {
			best.Reason = fmt.Sprintf("cheapest count in [%d, %d] whose p90 run time %.0fs meets the %.0fs to the deadline", req.Min, req.Max, best.P90, req.TimeToDeadline)
			return best, nil
		}
		fastest.Reason = fmt.Sprintf("no count in [%d, %d] meets the deadline by its p90; the fastest (p90 %.0fs of %.0fs left)", req.Min, req.Max, fastest.P90, req.TimeToDeadline)
		return fastest, nil
	}
	cur, err := at(req.Min)
	if err != nil {
		return Choice{}, err
	}
	for e := req.Min; e < req.Max; e++ {
		next, err := at(e + 1)
		if err != nil {
			return Choice{}, err
		}
		if saving := (cur.P50 - next.P50) / cur.P50; saving < KneeSaving {
			cur.Reason = fmt.Sprintf("knee: one more executor saves %.1f%% (< %.0f%%) of the p50 run time %.0fs", 100*max(saving, math.Inf(-1)), 100*KneeSaving, cur.P50)
			return cur, nil
		}
		cur = next
	}
	cur.Reason = fmt.Sprintf("every executor up to the maximum %d saves at least %.0f%% of the run time", req.Max, 100*KneeSaving)
	return cur, nil
}
