"""The web app's files (served by api/routes/web.py); a package only so that installs ship them."""
