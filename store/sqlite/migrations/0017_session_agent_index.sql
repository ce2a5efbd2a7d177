-- clawpit registry schema v17: the console's filter finds an agent's
-- sessions (issue 28: "the console shows it (a column and the filter)").
-- (agent, id) covers both reads: the distinct agents, one seek each
-- (min(agent) WHERE agent > ?), and one agent's session ids, which the
-- filter then looks up in tasks_owner_session, runs' and approvals' session
-- columns.
CREATE INDEX sessions_agent ON sessions(agent, id);
