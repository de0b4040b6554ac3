"""The web app's files (served by api/web.py); a package only so that installs ship them."""
