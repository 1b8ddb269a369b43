package upstream

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	t.Parallel()
	got := []time.Duration{}
	for n := 1; n <= 9; n++ {
		got = append(got, backoff(n))
	}
	want := []time.Duration{0, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second, 30 * time.Second}
	if !slices.Equal(got, want) {
		t.Fatalf("backoff = %v, want %v", got, want)
	}
}

func TestDeadlinesCancelLateCallsOnly(t *testing.T) {
	t.Parallel()
	w := &deadlines{tick: 5 * time.Millisecond}
	late, releaseLate := w.watch(context.Background(), 20*time.Millisecond)
	defer releaseLate()
	onTime, releaseOnTime := w.watch(context.Background(), time.Hour)
	select {
	case <-late.Done():
	case <-time.After(2 * time.Second):
		t.Fatal("a late call was not cancelled")
	}
	if !errors.Is(context.Cause(late), context.DeadlineExceeded) {
		t.Fatalf("cause = %v", context.Cause(late))
	}
	if onTime.Err() != nil {
		t.Fatal("a call within its timeout was cancelled")
	}
	releaseOnTime()
	if !errors.Is(context.Cause(onTime), context.Canceled) {
		t.Fatalf("released call's cause = %v", context.Cause(onTime))
	}
}

func TestUnavailableErrorSaysWhen(t *testing.T) {
	t.Parallel()
	err := error(&UnavailableError{Server: "fs", Cause: errors.New("exit status 1"), RetryIn: 1500 * time.Millisecond})
	if !strings.Contains(err.Error(), "fs") || !strings.Contains(err.Error(), "1.5s") {
		t.Fatal(err)
	}
	if IsTransport(err) {
		t.Fatal("unavailable is not a transport failure: a call that never started must not be retried as one that may have run")
	}
	if !IsTransport(&TransportError{Server: "fs", Err: errors.New("broken pipe")}) {
		t.Fatal("TransportError is a transport failure")
	}
}
