# Installation: headers, the libraries a production engine links, and a package config so that
# find_package(seqby) provides seqby::core and seqby::redis. (Owned by the build-system work.)
