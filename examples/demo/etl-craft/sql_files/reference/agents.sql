-- The support team: twelve agents in three teams.
SELECT agent_id, agent_name, team
  FROM (VALUES ('AG01', 'Avery Stone', 'North'),
               ('AG02', 'Blake Rivers', 'North'),
               ('AG03', 'Casey Moor', 'North'),
               ('AG04', 'Devon Hale', 'North'),
               ('AG05', 'Emery Vale', 'South'),
               ('AG06', 'Finley Brooks', 'South'),
               ('AG07', 'Gray Ellis', 'South'),
               ('AG08', 'Harper Quinn', 'South'),
               ('AG09', 'Indigo Park', 'Night'),
               ('AG10', 'Jordan Lake', 'Night'),
               ('AG11', 'Kai Morrow', 'Night'),
               ('AG12', 'Logan Reed', 'Night')) AS agents (agent_id, agent_name, team)
