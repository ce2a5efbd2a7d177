-- PostgreSQL port of store/migrations/0017_session_agent_index.sql (same
-- version number and index).
-- clawpit registry schema v17: the console's filter finds an agent's
-- sessions (issue 28). (agent, id) covers both reads: the distinct agents,
-- one seek each (min(agent) WHERE agent > ?), and one agent's session ids.
CREATE INDEX sessions_agent ON sessions(agent, id);
