"""Profile rendering; depends on the session module."""
from app.auth.session import current_user


def greeting(token):
    return "hello " + str(current_user(token)["token"])
