package store

import "github.com/clawpit/clawpit/core"

// TouchHost implements core.Tx (README "Many hosts: PostgreSQL"): upsert of the host's last sweep.
func (t *tx) TouchHost(host string, at core.Timestamp) error {
	if err := t.checkWritable("touch host"); err != nil {
		return err
	}
	if host == "" {
		return core.Invalidf("empty host name")
	}
	_, err := t.exec(`INSERT INTO hosts (name, swept_at) VALUES (?, ?)
		ON CONFLICT (name) DO UPDATE SET swept_at = excluded.swept_at`, host, int64(at))
	return err
}

// SweepHosts implements core.Tx: active jobs per host (through the partial
// index jobs_active) with the host's last sweep.
func (t *tx) SweepHosts() ([]core.HostRow, error) {
	return queryAll(t, `SELECT j.host, COUNT(*), COALESCE(MAX(h.swept_at), 0)
		FROM jobs j LEFT JOIN hosts h ON h.name = j.host
		WHERE j.status IN ('pending','running') AND j.host <> ''
		GROUP BY j.host ORDER BY j.host`, nil, func(r rowScanner, h *core.HostRow) error {
		return r.Scan(&h.Host, &h.ActiveJobs, &h.SweptAt)
	})
}
