"""apimachinery's validation: field errors and how each release words them (`fielderrors`), name
rules (`names`), and an object's metadata (`objectmeta`)."""
