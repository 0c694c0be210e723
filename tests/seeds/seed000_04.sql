CREATE TABLEGROUP htable1;

CREATE TABLE `htable1$family1` (
  `K` varbinary(1024) NOT NULL,
  `T` bigint(20) NOT NULL,
  `S` bigint(20) NOT NULL,
  `V` json NOT NULL,
  `G` bigint(20) GENERATED ALWAYS AS (ABS(T)),
  PRIMARY KEY (`K`, `T`, `S`)
) PARTITION BY KEY(`K`) PARTITIONS 97;

CREATE TABLE `htable1$family2` (
  `K` varbinary(1024) NOT NULL,
  `T` bigint(20) NOT NULL,
  `S` bigint(20) NOT NULL,
  `V` json NOT NULL,
  `G` bigint(20) GENERATED ALWAYS AS (ABS(T)),
  PRIMARY KEY (`K`, `T`, `S`)
) PARTITION BY KEY(`K`) PARTITIONS 97;
