package api

import (
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// GET /api/v1/forecast?horizon=&step=: the forecast of arrivals (p10,
// p50, p90 jobs, cpus, memory and deadline jobs per step) over the
// horizon ahead, the same span behind with the actual arrivals, and the
// warm pool's last decision (package warmlive builds the answer).

var forecastParams = []QueryParam{{Name: "horizon"}, {Name: "step"}}

// Defaults and bounds of the forecast's query.
const (
	DefaultForecastHorizon = 6 * time.Hour
	DefaultForecastStep    = 15 * time.Minute
	MaxForecastHorizon     = 7 * 24 * time.Hour
	MinForecastStep        = time.Minute
	MaxForecastSteps       = 500
)

// ForecastQuery is the forecast's parsed query.
type ForecastQuery struct {
	Horizon, Step time.Duration
}

// ParseForecastQuery reads horizon and step (Go durations, such as 6h and
// 15m); on error it names the field.
func ParseForecastQuery(q url.Values) (ForecastQuery, string, error) {
	o := ForecastQuery{Horizon: DefaultForecastHorizon, Step: DefaultForecastStep}
	for _, f := range []struct {
		name string
		to   *time.Duration
	}{{"horizon", &o.Horizon}, {"step", &o.Step}} {
		if v := q.Get(f.name); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil {
				return o, f.name, fmt.Errorf("%s must be a duration such as 6h or 15m, got %q", f.name, truncateQuery(v))
			}
			*f.to = d
		}
	}
	switch {
	case o.Horizon <= 0 || o.Horizon > MaxForecastHorizon:
		return o, "horizon", fmt.Errorf("horizon must be more than 0 and at most %s, got %s", MaxForecastHorizon, o.Horizon)
	case o.Step < MinForecastStep:
		return o, "step", fmt.Errorf("step must be at least %s, got %s", MinForecastStep, o.Step)
	case o.Step > o.Horizon:
		return o, "step", fmt.Errorf("step (%s) must not be longer than horizon (%s)", o.Step, o.Horizon)
	case o.Horizon/o.Step > MaxForecastSteps:
		return o, "step", fmt.Errorf("horizon / step must be at most %d steps, got %d; use a longer step", MaxForecastSteps, o.Horizon/o.Step)
	}
	return o, "", nil
}

func (s *Server) getForecast(w http.ResponseWriter, r *http.Request) {
	q, field, err := ParseForecastQuery(r.URL.Query())
	if err != nil {
		writeError(w, http.StatusBadRequest, field, err.Error())
		return
	}
	ctx, cancel := s.dbContext(r)
	defer cancel()
	out, err := s.cfg.Forecast(ctx, q.Horizon, q.Step)
	if err != nil {
		writeStoreError(w, r, "read /api/v1/forecast", err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}
