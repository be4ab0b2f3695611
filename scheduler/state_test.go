package scheduler

import (
	"errors"
	"testing"
)

func TestTransitions(t *testing.T) {
	legal := map[[2]State]bool{
		{Submitted, Queued}: true, {Submitted, Rejected}: true, {Submitted, Cancelled}: true,
		{Queued, Placing}: true, {Queued, Rejected}: true, {Queued, Cancelled}: true,
		{Placing, Reserving}: true, {Placing, Queued}: true, {Placing, Rejected}: true, {Placing, Failed}: true, {Placing, Cancelled}: true,
		{Reserving, Launching}: true, {Reserving, Queued}: true, {Reserving, Failed}: true, {Reserving, Cancelled}: true, {Reserving, Killed}: true,
		{Launching, Running}: true, {Launching, Finished}: true, {Launching, Queued}: true, {Launching, Failed}: true, {Launching, Killed}: true,
		{Running, Finished}: true, {Running, Failed}: true, {Running, Killed}: true, {Running, Queued}: true,
	}
	for _, from := range AllStates {
		for _, to := range AllStates {
			want := legal[[2]State{from, to}]
			if got := CanTransition(from, to); got != want {
				t.Errorf("CanTransition(%s, %s) = %v, want %v", from, to, got, want)
			}
			err := CheckTransition(from, to)
			if want != (err == nil) {
				t.Errorf("CheckTransition(%s, %s) = %v", from, to, err)
			}
			if err != nil && !errors.Is(err, ErrIllegalTransition) {
				t.Errorf("error %v does not wrap ErrIllegalTransition", err)
			}
		}
		if from.Terminal() {
			for _, to := range AllStates {
				if CanTransition(from, to) {
					t.Errorf("terminal %s may move to %s", from, to)
				}
			}
		}
	}
}

func TestParseState(t *testing.T) {
	for _, s := range AllStates {
		got, err := ParseState(string(s))
		if err != nil || got != s {
			t.Errorf("ParseState(%s) = %v, %v", s, got, err)
		}
	}
	if _, err := ParseState("queued"); err == nil {
		t.Error("lower-case state accepted")
	}
}
