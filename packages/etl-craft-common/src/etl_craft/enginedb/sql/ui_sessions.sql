-- name: insert_ui_session --
-- Begin a web UI session for a token or a user; the cookie carries the id whose SHA-256 this is.
INSERT INTO AUD_UI_SESSIONS (SESSION_SHA256, TOKEN_ID, USER_ID, CLIENT, STARTED_AT, EXPIRES_AT)
VALUES (:session_sha256, :token_id, :user_id, :client, etl_craft_now(),
        etl_craft_add_seconds(etl_craft_now(), :lifetime_seconds));

-- name: live_ui_session_holder --
-- The token or user of a session that was neither signed out nor has expired; no row otherwise.
SELECT TOKEN_ID AS token_id, USER_ID AS user_id
  FROM AUD_UI_SESSIONS
 WHERE SESSION_SHA256 = CAST(:session_sha256 AS VARCHAR(64))
   AND ENDED_AT IS NULL AND EXPIRES_AT > etl_craft_now();

-- name: end_ui_session --
-- Sign a session out: from now on its cookie is refused, in every UI process.
UPDATE AUD_UI_SESSIONS SET ENDED_AT = etl_craft_now()
 WHERE SESSION_SHA256 = CAST(:session_sha256 AS VARCHAR(64)) AND ENDED_AT IS NULL;

-- name: record_ui_sign_in --
-- Record a sign-in and use up its form's nonce; no row comes back when the nonce was used before.
INSERT INTO AUD_UI_SIGN_INS (NONCE_SHA256, CLIENT, ACCOUNT, OUTCOME, REASON, ATTEMPTED_AT)
VALUES (:nonce_sha256, :client, :account, :outcome, :reason, etl_craft_now())
ON CONFLICT (NONCE_SHA256) DO NOTHING
RETURNING SIGN_IN_ID AS sign_in_id;

-- name: recent_ui_sign_in_failures --
-- Failed sign-ins within the last :window_seconds from one client, and of one account.
SELECT (SELECT count(*) FROM AUD_UI_SIGN_INS
         WHERE CLIENT = CAST(:client AS VARCHAR(64)) AND OUTCOME = 'FAILED'
           AND ATTEMPTED_AT > etl_craft_add_seconds(etl_craft_now(), -:window_seconds)) AS by_client,
       (SELECT count(*) FROM AUD_UI_SIGN_INS
         WHERE ACCOUNT = CAST(:account AS VARCHAR(128)) AND OUTCOME = 'FAILED'
           AND ATTEMPTED_AT > etl_craft_add_seconds(etl_craft_now(), -:window_seconds)) AS by_account;
