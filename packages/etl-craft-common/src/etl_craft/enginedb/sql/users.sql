-- name: insert_user --
-- Record a new user; a password is kept only as its scrypt hash.
INSERT INTO CFG_USERS (USER_NAME, DISPLAY_NAME, EMAIL, ROLE, PASSWORD_HASH, SOURCE, DISABLED_FLAG)
VALUES (:user_name, :display_name, :email, :role, :password_hash, :source, 'N')
RETURNING USER_ID AS user_id;

-- name: user_by_name --
-- The user with this name, for signing in and for an admin's changes.
SELECT USER_ID AS user_id, USER_NAME AS user_name, DISPLAY_NAME AS display_name, EMAIL AS email,
       ROLE AS role, PASSWORD_HASH AS password_hash, SOURCE AS source,
       DISABLED_FLAG AS disabled_flag, CREATED_BY AS created_by, CREATE_DATE AS created_at,
       UPDATED_BY AS updated_by, UPDATE_DATE AS updated_at
  FROM CFG_USERS
 WHERE USER_NAME = CAST(:user_name AS VARCHAR(128));

-- name: user_by_id --
-- The user a session was opened by, read at every request of that session.
SELECT USER_ID AS user_id, USER_NAME AS user_name, DISPLAY_NAME AS display_name, EMAIL AS email,
       ROLE AS role, PASSWORD_HASH AS password_hash, SOURCE AS source,
       DISABLED_FLAG AS disabled_flag, CREATED_BY AS created_by, CREATE_DATE AS created_at,
       UPDATED_BY AS updated_by, UPDATE_DATE AS updated_at
  FROM CFG_USERS
 WHERE USER_ID = :user_id;

-- name: users --
-- Every user, by name; whether each has a password, never its hash.
SELECT USER_ID AS user_id, USER_NAME AS user_name, DISPLAY_NAME AS display_name, EMAIL AS email,
       ROLE AS role, CASE WHEN PASSWORD_HASH IS NULL THEN NULL ELSE 'set' END AS password_hash, SOURCE AS source, DISABLED_FLAG AS disabled_flag,
       CREATED_BY AS created_by, CREATE_DATE AS created_at, UPDATED_BY AS updated_by,
       UPDATE_DATE AS updated_at
  FROM CFG_USERS
 ORDER BY USER_NAME;

-- name: set_user_role --
-- Give a user another role; their sessions take it from their next request.
UPDATE CFG_USERS SET ROLE = :role
 WHERE USER_NAME = CAST(:user_name AS VARCHAR(128))
RETURNING USER_ID AS user_id;

-- name: set_user_disabled --
-- Disable a user (their sessions end at their next request) or enable them again.
UPDATE CFG_USERS SET DISABLED_FLAG = :disabled_flag
 WHERE USER_NAME = CAST(:user_name AS VARCHAR(128))
RETURNING USER_ID AS user_id;

-- name: set_user_password --
-- Replace a user's password hash.
UPDATE CFG_USERS SET PASSWORD_HASH = :password_hash
 WHERE USER_NAME = CAST(:user_name AS VARCHAR(128))
RETURNING USER_ID AS user_id;
