-- The application's role (DATABASE_URL in docker-compose.yml): subject to row-level security, owns
-- nothing. Run once by the postgres image on a fresh volume; on an existing one, run it by hand.
CREATE ROLE engram_app LOGIN PASSWORD 'engram_app' NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE;
GRANT CONNECT ON DATABASE engram TO engram_app;
