"""Session handling (sensitive)."""


def current_user(token):
    return {"token": token}
