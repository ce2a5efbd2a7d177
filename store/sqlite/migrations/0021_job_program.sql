-- clawpit registry schema v21: the Jobs pane's command order reads the
-- program by the name the pane shows it (argv[0] after its last '/'), then
-- the stored command (its arguments as a JSON array): sorting the JSON
-- alone put `/usr/bin/make` far from `make`. The same order is what the
-- console's in-memory windows compute (package view: JobProgram).
-- rtrim(p, replace(p, '/', '')) is p's directory part (every character
-- after the last '/' trimmed), which replace removes. A command that is
-- not JSON (written by hand) has no program.
ALTER TABLE jobs ADD COLUMN win_program TEXT GENERATED ALWAYS AS
  (CASE WHEN json_valid(command) AND json_type(command, '$[0]') = 'text' THEN
     replace(json_extract(command, '$[0]'),
             rtrim(json_extract(command, '$[0]'), replace(json_extract(command, '$[0]'), '/', '')), '')
   ELSE '' END) VIRTUAL;
DROP INDEX jobs_win_command;
CREATE INDEX jobs_win_command ON jobs(win_program, command, id);
