package core

import "time"

// Thresholds are the maintenance settings of docs/contract.md "Maintenance", as flags and config keys.
type Thresholds struct {
	Grace         time.Duration // R5 grace window for unbacked active tasks (default 5m)
	SilentWindow  time.Duration // R7 how recently a silent task must have ended (default 15m)
	Retention     time.Duration // R8 terminal tasks, ended runs, decided approvals, delivered notifications (default 168h)
	LostRetention time.Duration // R8 lost tasks (default 24h)
	JobRetention  time.Duration // R8 terminal jobs (default 24h)
	StaleQueued   time.Duration // R10 audit: queued this long (default 10m)
	StaleRunning  time.Duration // R10 audit: running this long unbacked (default 30m)
}

// DefaultThresholds returns the defaults of docs/contract.md "The rules".
func DefaultThresholds() Thresholds {
	return Thresholds{
		Grace:         5 * time.Minute,
		SilentWindow:  15 * time.Minute,
		Retention:     7 * 24 * time.Hour,
		LostRetention: 24 * time.Hour,
		JobRetention:  24 * time.Hour,
		StaleQueued:   10 * time.Minute,
		StaleRunning:  30 * time.Minute,
	}
}

// TaskRetention is how long a terminal task is kept after it ended (docs/contract.md "Retention").
func (th Thresholds) TaskRetention(s TaskStatus) time.Duration {
	if s == TaskLost {
		return th.LostRetention
	}
	return th.Retention
}

// RetentionFor is how long a finished row of entity is kept after its end
// (docs/contract.md "Retention"). status matters for tasks only (TaskRetention); jobs keep
// JobRetention, every other entity Retention.
func (th Thresholds) RetentionFor(entity, status string) time.Duration {
	switch entity {
	case EntityTask:
		return th.TaskRetention(TaskStatus(status))
	case EntityJob:
		return th.JobRetention
	}
	return th.Retention
}
