package scheduler

import "time"

// ReservationState is where one reservation is in its life.
type ReservationState string

const (
	ResPlanned     ReservationState = "planned"
	ResReserving   ReservationState = "reserving"
	ResReserved    ReservationState = "reserved"
	ResUnreserving ReservationState = "unreserving"
	ResReleased    ReservationState = "released"
	ResFailed      ReservationState = "failed"
)

// Reservation is the durable record of what sparkpack reserved (or means
// to reserve) for a job on one agent, so that a restart knows what was
// asked of the cluster and nothing leaks.
type Reservation struct {
	JobID     string           `json:"jobId"`
	AgentID   string           `json:"agentId"`
	Role      string           `json:"role"`
	CPUs      float64          `json:"cpus"`
	MemMB     float64          `json:"memMB"`
	State     ReservationState `json:"state"`
	UpdatedAt time.Time        `json:"updatedAt"`
}
